"""The admin dashboard's figures (``service.dashboard``): subscribers by status, their changes
per day, the outbox's health, the platform connection and the latest issue.

The subscriber figures count the whole list (about 0.7 s of database work at a million
subscribers), so they are kept: counted at most once per :data:`KEEP_FIGURES` for each range,
by the first view that finds them older (it takes a shared lease, so twenty editors refreshing
at once start one count, not twenty), and read by every other view as they were last counted,
with the time they were counted. Keeping them is best-effort: those writes wait only the short
reply bound, and a view that cannot write shows what it has. The outbox, the connection and
the latest issue are read live: each is a small read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import DbUnavailable, InvalidRequest
from ..https_rule import without_credentials
from ..model.contact import STATUSES
from ..short_reads import short_reads
from ..storage.outbox_records import OutboxStatus
from ..storage.records import IssueRecord, SubscriberDay
from .context import ServiceContext

#: The ranges the dashboard offers, in days (today included).
DASHBOARD_RANGES = (30, 90)
#: How long the subscriber figures are kept before a view counts them again.
KEEP_FIGURES = timedelta(minutes=1)
#: The setting each range's kept figures live under (then the range's days), and the shared
#: counter that lets one view at a time count them again.
KEPT_NAME = "dashboard.subscriber_figures."


@dataclass(frozen=True)
class ConnectionState:
    """The active platform connection, without its token or any credentials in its address."""

    platform: str
    transport: str
    since: datetime


@dataclass(frozen=True)
class Dashboard:
    """What the dashboard shows; ``days`` holds every day of the range, quiet ones as zeros."""

    by_status: dict[str, int]
    days: list[SubscriberDay]
    #: When the subscriber figures (``by_status``, ``days``) were counted.
    counted_at: datetime
    outbox: OutboxStatus
    connection: ConnectionState | None
    latest_issue: IssueRecord | None
    now: datetime

    @property
    def total(self) -> int:
        return sum(self.by_status.values())

    @property
    def oldest_pending_age(self) -> timedelta | None:
        """How long the oldest undelivered event has waited."""
        at = self.outbox.oldest_pending_at
        return None if at is None else self.now - at


class DashboardService:
    """``service.dashboard``."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    def overview(self, days: int = DASHBOARD_RANGES[0]) -> Dashboard:
        """The figures for the last ``days`` UTC days (one of :data:`DASHBOARD_RANGES`,
        else :class:`InvalidRequest` naming ``days``), read in one unit of work."""
        if days not in DASHBOARD_RANGES:
            allowed = " or ".join(str(n) for n in DASHBOARD_RANGES)
            raise InvalidRequest(f"days must be {allowed}", field="days")
        now = self.context.clock()
        figures = self._subscriber_figures(days, now)
        with self.context.storage.transaction(write=False) as uow:
            outbox = uow.outbox.status()
            connection = uow.connections.active()
            recent = uow.issues.list_recent(1, include_bodies=False)
        return Dashboard(
            by_status=figures.by_status,
            days=figures.days,
            counted_at=figures.counted_at,
            outbox=outbox,
            connection=None
            if connection is None
            else ConnectionState(
                platform=without_credentials(connection.platform_base),
                transport=connection.transport,
                since=connection.created_at,
            ),
            latest_issue=recent[0] if recent else None,
            now=now,
        )

    def _subscriber_figures(self, days: int, now: datetime) -> SubscriberFigures:
        """The kept figures of the range when counted within :data:`KEEP_FIGURES` (or being
        counted by another view), else counted now and kept."""
        name = f"{KEPT_NAME}{days}"
        with self.context.storage.transaction(write=False) as uow:
            kept = SubscriberFigures.from_value(uow.settings.get(name))
        if kept is not None and kept.fresh(now):
            return kept
        if kept is not None:
            try:
                with short_reads(), self.context.storage.transaction() as uow:
                    lease = uow.rate_limits.hit(name, now=now, expires_at=now + KEEP_FIGURES)
            except DbUnavailable:
                return kept  # the store is busy writing: the kept figures will do
            if lease > 1:
                return kept  # another view is counting them
        last = now.date()
        first = last - timedelta(days=days - 1)
        with self.context.storage.transaction(write=False) as uow:
            by_status = {status: uow.subscribers.count(status=status) for status in STATUSES}
            changes = uow.subscribers.changes_per_day(first=first, last=last)
        counted = SubscriberFigures(by_status, _every_day(first, last, changes), now)
        try:
            with short_reads(), self.context.storage.transaction() as uow:
                uow.settings.put(name, counted.value(), at=now)
        except DbUnavailable:
            pass  # shown now; a later view keeps them
        return counted


@dataclass(frozen=True)
class SubscriberFigures:
    """The subscriber figures of one range, as kept between counts (``counted_at``: when)."""

    by_status: dict[str, int]
    days: list[SubscriberDay]
    counted_at: datetime

    def fresh(self, now: datetime) -> bool:
        """Counted within :data:`KEEP_FIGURES` before ``now``, and on its last day."""
        today = bool(self.days) and self.days[-1].day == now.date()
        return today and now - KEEP_FIGURES < self.counted_at <= now

    def value(self) -> dict[str, Any]:
        """As kept: plain JSON values."""
        return {
            "by_status": self.by_status,
            "days": [[d.day.isoformat(), d.signups, d.unsubscribes, d.bounces] for d in self.days],
            "counted_at": self.counted_at.isoformat(),
        }

    @classmethod
    def from_value(cls, value: Any) -> SubscriberFigures | None:
        """The figures :meth:`value` kept; ``None`` for none, or for a value of another shape."""
        try:
            return cls(
                by_status={status: int(value["by_status"][status]) for status in STATUSES},
                days=[
                    SubscriberDay(date.fromisoformat(day), int(a), int(b), int(c))
                    for day, a, b, c in value["days"]
                ],
                counted_at=datetime.fromisoformat(value["counted_at"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


def _every_day(first: date, last: date, changes: list[SubscriberDay]) -> list[SubscriberDay]:
    by_day = {change.day: change for change in changes}
    span = (last - first).days + 1
    days = (first + timedelta(days=n) for n in range(span))
    return [by_day.get(day) or SubscriberDay(day, 0, 0, 0) for day in days]
