"""Whether a sync runner is at work: every runner's loop leaves a heartbeat (a periodic task,
at most one write a minute per runner), and the admin pages read how long ago the last was.
The work that waits for a runner (imports, acts on all matching, deliveries to the platform)
says so in words when none has been seen for :data:`QUIET_AFTER`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .context import ServiceContext

#: The stored setting holding the last heartbeat's time (ISO-8601, UTC).
RUNNER_SEEN_SETTING = "sync_runner_seen"
#: The least time between two heartbeats of one runner.
BEAT_EVERY = timedelta(minutes=1)
#: With no heartbeat for this long, no runner is taken to be running (a runner's loop takes at
#: most about half a minute, so a running one beats well within it).
QUIET_AFTER = timedelta(minutes=3)


@dataclass(frozen=True)
class RunnerSeen:
    """When a runner was last seen (``None``: never), and whether that is too long ago."""

    last_seen: datetime | None
    quiet: bool


class RunnerStatusService:
    """``service.runner_status``."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context
        self._last_beat: datetime | None = None

    def beat(self, now: datetime | None = None) -> None:
        """The periodic task: record that a runner is at work ``now`` (the runner's clock),
        unless this runner did less than :data:`BEAT_EVERY` ago."""
        now = now or self.context.clock()
        if self._last_beat is not None and now - self._last_beat < BEAT_EVERY:
            return
        with self.context.storage.transaction() as uow:
            uow.settings.put(RUNNER_SEEN_SETTING, now.isoformat(), at=now)
        self._last_beat = now

    def seen(self) -> RunnerSeen:
        """When a runner last left a heartbeat, and whether none has for :data:`QUIET_AFTER`."""
        with self.context.storage.transaction(write=False) as uow:
            stored = uow.settings.get(RUNNER_SEEN_SETTING)
        try:
            last = datetime.fromisoformat(stored) if isinstance(stored, str) else None
        except ValueError:
            last = None
        quiet = last is None or self.context.clock() - last > QUIET_AFTER
        return RunnerSeen(last_seen=last, quiet=quiet)
