"""Acts on every subscriber matching a filter, queued as jobs the sync runner works through
(``service.subscriber_jobs``). Always the built-in tables.

A job walks the subscribers matching its filter newest first, from the moment it was asked
for (later signups are not its business), a chunk at a time. Each chunk's acts and the job's
new position and counts commit in one transaction, under the job's lease: a runner that lost
its lease (expired, or the job was stopped) cannot commit a chunk, so no act is ever applied
twice, and a runner killed mid-chunk leaves the chunk undone for the next lease holder."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .subscriber_query import SubscriberFilter


@dataclass(frozen=True)
class NewBulkJob:
    """What a job is asked to do: ``act`` (``unsubscribe``, ``bounce`` or ``erase``) every
    subscriber matching ``filter`` who signed up before ``requested_at``; ``filter_text`` is
    the list's query as the editor had it (an erasure's without the address and name
    beginnings), and ``expected`` the number matching then (``expected_exact`` false: an
    estimate)."""

    act: str
    filter: SubscriberFilter
    filter_text: str
    requested_by: str
    requested_at: datetime
    expected: int
    expected_exact: bool


@dataclass(frozen=True)
class BulkJobRecord:
    """A job and how far it got: the last subscriber done sits at (``position_at``,
    ``position_id``) in signup order, newest first; ``changed``, ``unchanged`` (already so)
    and ``missing`` (gone before their turn) count the subscribers done. ``finished_at`` is
    set when the walk ends or the job is stopped (``stopped_by``: who stopped it); from then on
    ``filter`` is empty: a finished job forgets what it matched (an address or a name it began
    with), and only ``filter_text`` says it."""

    id: int
    act: str
    filter: SubscriberFilter
    filter_text: str
    requested_by: str
    requested_at: datetime
    expected: int
    expected_exact: bool
    position_at: datetime
    position_id: int
    changed: int
    unchanged: int
    missing: int
    started_at: datetime | None
    finished_at: datetime | None
    stopped_by: str | None

    @property
    def done(self) -> int:
        """Subscribers done so far."""
        return self.changed + self.unchanged + self.missing

    @property
    def position(self) -> tuple[datetime, int]:
        """Where the walk goes on (``SubscriberQuery.after``)."""
        return (self.position_at, self.position_id)


@dataclass(frozen=True)
class BulkJobProgress:
    """One chunk's outcome, added to the job's counts; ``position``: the chunk's last
    subscriber; ``finished``: the walk has ended."""

    position: tuple[datetime, int]
    changed: int
    unchanged: int
    missing: int
    finished: bool
