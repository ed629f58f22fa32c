"""The SQL outbox: events queued with the change that caused them, for the sync runner.

Claims (several runners may claim at once) live in :mod:`.outbox_claims`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, case, delete, func, insert, select, update
from sqlalchemy.engine import RowMapping

from ...json_encoding import dumps_text
from ...storage.outbox_records import (
    ClaimedBatch,
    NewEvent,
    OutboxBatchRecord,
    OutboxStatus,
    SubscriberEventRecord,
)
from . import outbox_claims
from .copy_rows import copy_rows
from .engine import is_mysql
from .record_builders import record_of
from .repository import SqlRepository
from .tables import outbox_batches, outbox_events

BATCH_STATES = ("pending", "sending", "delivered", "failed")


_b = outbox_batches.c
_e = outbox_events.c

# Every signup and change queues events: the statements are built once.
_ENQUEUE = insert(outbox_events)
#: The columns an enqueue writes (also the one-statement signup's event inserts).
ENQUEUE_COLUMNS = (
    "event_id",
    "event_type",
    "occurred_at",
    "payload",
    "subscriber_key",
    "created_at",
)


def event_columns(event: NewEvent, prefix: str = "") -> dict[str, Any]:
    """The enqueue's column values of ``event`` (a :data:`ENQUEUE_COLUMNS` field each), each
    named ``prefix`` + its column."""
    return {prefix + name: getattr(event, name) for name in ENQUEUE_COLUMNS}


#: SQLite: the enqueue with every column a parameter of its own name (to compile once).
SQLITE_ENQUEUE = _ENQUEUE.values({name: bindparam(name) for name in ENQUEUE_COLUMNS})

# PostgreSQL: the same insert, entering the outbox's commit horizon before its seq is drawn
# (the claim's ranges rely on it), in the same round trip.
_ENQUEUE_IN_HORIZON = insert(outbox_events).from_select(
    ENQUEUE_COLUMNS,
    outbox_claims.OUTBOX_HORIZON.row_entering(outbox_events, ENQUEUE_COLUMNS),
)

# Built once: every claim settles the previous one's batches.
_SETTLE_DELIVERED_ANY_LEASE = (
    update(outbox_batches)
    .where(_b.id.in_(bindparam("ids", expanding=True)), _b.state == "sending")
    .values(lease_until=None, state="delivered", settled_at=bindparam("at"), last_error=None)
)
_SETTLE_DELIVERED = _SETTLE_DELIVERED_ANY_LEASE.where(_b.lease_until == bindparam("claimed_lease"))


class SqlOutbox(SqlRepository):
    """Outbound events, written in the same transaction as the change that caused them.

    What the sync runner needs from the outbox (part of :class:`OutboxRepository`). The
    settle methods act only on a batch still sending and, given the claim's ``lease_until``,
    only while that claim holds (so no runner settles an attempt of another)."""

    def enqueue(
        self,
        *,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
        subscriber_key: str | None,
        created_at: datetime,
    ) -> None:
        """Queue one event (in no batch yet); ``subscriber_key`` as in :class:`NewEvent`."""
        dialect = self.connection.dialect.name
        if is_mysql(dialect):
            outbox_claims.OUTBOX_HORIZON.enter_insert(self.connection)
        self.connection.execute(
            _ENQUEUE_IN_HORIZON if dialect == "postgresql" else _ENQUEUE,
            {
                "event_id": event_id,
                "event_type": event_type,
                "occurred_at": occurred_at,
                "payload": payload,
                "subscriber_key": subscriber_key,
                "created_at": created_at,
            },
        )

    def enqueue_many(
        self, events: Sequence[NewEvent], *, meanwhile: Callable[[], None] | None = None
    ) -> None:
        """Queue ``events`` in order, as :meth:`enqueue` one after another would (an import's
        chunk queues hundreds at once). ``meanwhile`` (which must not raise) is called once,
        while PostgreSQL stores the events (see :func:`.copy_rows.copy_rows`), or after."""
        if not events or self.connection.dialect.name != "postgresql":
            if events and is_mysql(self.connection.dialect.name):
                outbox_claims.OUTBOX_HORIZON.enter_insert(self.connection)
            if events:
                self.connection.execute(_ENQUEUE, [event_columns(event) for event in events])
            if meanwhile is not None:
                meanwhile()
            return
        # PostgreSQL enters the horizon once, before any seq is drawn, and holds it to the
        # transaction's end, like each single enqueue.
        outbox_claims.OUTBOX_HORIZON.enter_insert(self.connection)
        rows = (
            (e.event_id, e.event_type, e.occurred_at, dumps_text(e.payload), e.subscriber_key,
             e.created_at)
            for e in events
        )  # fmt: skip
        copy_rows(self.connection, outbox_events.name, ENQUEUE_COLUMNS, rows, meanwhile=meanwhile)

    def discard_for_subscriber(self, subscriber_key: str) -> int:
        # Delivered = in the range of a delivered batch. Per event: the one batch that may hold
        # it (an index look-up on last_seq), then whether it does and is delivered.
        """Erase every stored event carrying this subscriber's address, delivered or not; how
        many of them were still undelivered."""
        holder = (
            select(case((and_(_b.first_seq <= _e.seq, _b.state == "delivered"), 1), else_=0))
            .where(_b.last_seq >= _e.seq)
            .order_by(_b.last_seq)
            .limit(1)
            .scalar_subquery()
        )
        undelivered = self.connection.scalar(
            select(func.count())
            .select_from(outbox_events)
            .where(_e.subscriber_key == subscriber_key, func.coalesce(holder, 0) == 0)
        )
        self.connection.execute(delete(outbox_events).where(_e.subscriber_key == subscriber_key))
        return int(undelivered or 0)

    def events_about(self, subscriber_key: str, *, limit: int) -> list[SubscriberEventRecord]:
        """The newest ``limit`` stored events carrying this subscriber's address, newest
        first, each with its batch's delivery state (pruned delivered events are gone). One
        index range read, and one index look-up on ``last_seq`` per event."""
        rows = self._with_delivery(_e.subscriber_key == subscriber_key, limit=limit)
        return [record_of(SubscriberEventRecord, row) for row in rows]

    def events_by_id(self, event_ids: Sequence[str]) -> dict[str, SubscriberEventRecord]:
        """The stored events of ``event_ids`` (at most a page's worth), by id, each with its
        batch's delivery state; an id whose event is gone (delivered and pruned) is left out.
        One look-up of the unique event id index, and one on ``last_seq``, per event."""
        if not event_ids:
            return {}
        rows = self._with_delivery(_e.event_id.in_(list(event_ids)), limit=len(event_ids))
        return {row["event_id"]: record_of(SubscriberEventRecord, row) for row in rows}

    def _with_delivery(self, which: ColumnElement[bool], *, limit: int) -> list[RowMapping]:
        """The newest ``limit`` events ``which`` selects, newest first, with their batch."""
        # The one batch that may hold each event: the first last_seq at or above its seq.
        holder = (
            select(_b.id).where(_b.last_seq >= _e.seq).order_by(_b.last_seq).limit(1)
        ).scalar_subquery()
        events = (
            select(_e.seq, _e.event_id, _e.event_type, _e.occurred_at, holder.label("batch_id"))
            .where(which)
            .order_by(_e.seq.desc())
            .limit(limit)
            .subquery()
        )
        return list(
            self.connection.execute(
                select(
                    events.c.event_id,
                    events.c.event_type,
                    events.c.occurred_at,
                    _b.state,
                    func.coalesce(_b.attempts, 0).label("attempts"),
                    _b.settled_at,
                )
                .select_from(
                    events.outerjoin(
                        outbox_batches,
                        and_(_b.id == events.c.batch_id, _b.first_seq <= events.c.seq),
                    )
                )
                .order_by(events.c.seq.desc())
            ).mappings()
        )

    # -- delivery (the sync runner) ----------------------------------------------------------

    def claim_batches(
        self, *, now: datetime, lease_until: datetime, batch_size: int, max_batches: int
    ) -> list[ClaimedBatch]:
        """Lease up to ``max_batches`` batches until ``lease_until`` (which must cover sending
        all of them, one after the other), in sending order: first the due pending batches
        (``next_attempt_at <= now``), oldest first; then, while there is room, the oldest
        queued events frozen into new batches of at most ``batch_size`` (whose members never
        change). Each is sending with ``attempts + 1``. Concurrent callers never claim the same
        batch or freeze the same event. Events come oldest first; a batch emptied by erasure
        has none. ``[]`` when nothing is due or queued."""
        return outbox_claims.claim_batches(
            self.connection,
            now=now,
            lease_until=lease_until,
            batch_size=batch_size,
            max_batches=max_batches,
        )

    def release_claims(self, batch_ids: Sequence[str], *, lease_until: datetime) -> int:
        """Return unsent batches still sending under the claim ``lease_until`` to pending as if
        never claimed (``attempts - 1``, due time unchanged); how many."""
        return outbox_claims.release_claims(self.connection, batch_ids, lease_until=lease_until)

    def _settle(self, batch_id: str, lease_until: datetime | None, **values: Any) -> bool:
        conditions = [_b.id == batch_id, _b.state == "sending"]
        if lease_until is not None:
            conditions.append(_b.lease_until == lease_until)
        result = self.connection.execute(
            update(outbox_batches).where(*conditions).values(lease_until=None, **values)
        )
        return bool(result.rowcount)

    def settle_delivered(
        self, batch_ids: Sequence[str], *, at: datetime, lease_until: datetime | None = None
    ) -> int:
        """Mark sending batches delivered (clearing their error); how many."""
        if not batch_ids:
            return 0
        statement = _SETTLE_DELIVERED if lease_until is not None else _SETTLE_DELIVERED_ANY_LEASE
        result = self.connection.execute(
            statement, {"ids": list(batch_ids), "at": at, "claimed_lease": lease_until}
        )
        return int(result.rowcount)

    def schedule_retry(
        self,
        batch_id: str,
        *,
        error: str,
        next_attempt_at: datetime,
        lease_until: datetime | None = None,
    ) -> bool:
        """Return a sending batch to pending, due at ``next_attempt_at``, keeping ``error``."""
        return self._settle(
            batch_id,
            lease_until,
            state="pending",
            next_attempt_at=next_attempt_at,
            last_error=error,
        )

    def mark_failed(
        self, batch_id: str, *, error: str, at: datetime, lease_until: datetime | None = None
    ) -> bool:
        """Give up on a sending batch: failed, kept with ``error`` for the operator."""
        return self._settle(batch_id, lease_until, state="failed", settled_at=at, last_error=error)

    def release_expired_leases(self, *, now: datetime) -> int:
        """Return sending batches whose lease ended before ``now`` to pending, due now."""
        result = self.connection.execute(
            update(outbox_batches)
            .where(_b.state == "sending", _b.lease_until < now)
            .values(state="pending", lease_until=None, next_attempt_at=now)
        )
        return int(result.rowcount)

    def prune_delivered(self, *, settled_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` batches delivered before ``settled_before``, with their
        events; how many."""
        rows = self.connection.execute(
            select(_b.id, _b.first_seq, _b.last_seq)
            .where(_b.state == "delivered", _b.settled_at < settled_before)
            .order_by(_b.settled_at)
            .limit(limit)
        ).all()
        if not rows:
            return 0
        ranges = [{"lo": r[1], "hi": r[2]} for r in rows if r[1] is not None]
        if ranges:
            self.connection.execute(
                delete(outbox_events).where(_e.seq.between(bindparam("lo"), bindparam("hi"))),
                ranges,
            )
        # The newest batch's last_seq is the queue's frontier: it may be pruned, since the
        # events of its range go with it (a lower frontier then covers no event).
        result = self.connection.execute(
            delete(outbox_batches).where(_b.id.in_([str(r[0]) for r in rows]))
        )
        return int(result.rowcount)

    def status(self) -> OutboxStatus:
        """Counts for the operator tools (set-based; never loads rows)."""
        counts = dict.fromkeys(BATCH_STATES, 0)
        for state, count in self.connection.execute(
            select(_b.state, func.count()).group_by(_b.state)
        ):
            counts[str(state)] = int(count)
        frontier = select(func.coalesce(func.max(_b.last_seq), 0)).scalar_subquery()
        queued_count, queued_oldest = self.connection.execute(
            select(func.count(), func.min(_e.occurred_at)).where(_e.seq > frontier)
        ).one()
        # From the batches (few) to their events (a primary-key range each).
        by_state: dict[str, tuple[int, datetime | None]] = dict.fromkeys(
            ("pending", "sending", "failed"), (0, None)
        )
        for state, count, oldest_at in self.connection.execute(
            select(_b.state, func.count(_e.seq), func.min(_e.occurred_at))
            .select_from(
                outbox_batches.join(outbox_events, _e.seq.between(_b.first_seq, _b.last_seq))
            )
            .where(_b.state.in_(("pending", "sending", "failed")))
            .group_by(_b.state)
        ):
            by_state[str(state)] = (int(count), oldest_at)
        (pending, pending_at), (sending, sending_at) = by_state["pending"], by_state["sending"]
        oldest = [at for at in (queued_oldest, pending_at, sending_at) if at is not None]
        last_error = self.connection.scalar(
            select(_b.last_error)
            .where(_b.last_error.is_not(None), _b.state.in_(("pending", "failed")))
            .order_by(func.coalesce(_b.settled_at, _b.next_attempt_at).desc())
            .limit(1)
        )
        waiting_retry, last_delivered_at = self.connection.execute(
            select(
                select(func.count())
                .where(_b.state == "pending", _b.attempts > 0)
                .scalar_subquery(),
                select(func.max(_b.settled_at)).where(_b.state == "delivered").scalar_subquery(),
            )
        ).one()
        return OutboxStatus(
            batches=counts,
            unbatched=int(queued_count),
            undelivered_events=int(queued_count) + pending + sending,
            failed_events=by_state["failed"][0],
            oldest_pending_at=min(oldest) if oldest else None,
            last_error=last_error,
            waiting_retry=int(waiting_retry),
            last_delivered_at=last_delivered_at,
        )

    def _records(self, *conditions: Any, limit: int) -> list[OutboxBatchRecord]:
        members = (
            select(func.count()).where(_e.seq.between(_b.first_seq, _b.last_seq)).scalar_subquery()
        )
        rows = self.connection.execute(
            select(
                _b.id,
                _b.state,
                _b.attempts,
                _b.next_attempt_at,
                _b.last_error,
                _b.created_at,
                _b.settled_at,
                members.label("event_count"),
            )
            .where(*conditions)
            .order_by(_b.id)
            .limit(limit)
        ).mappings()
        return [record_of(OutboxBatchRecord, row) for row in rows]

    def failed_batches(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[OutboxBatchRecord]:
        """Failed batches ordered by id, strictly after the id ``after`` (keyset paging)."""
        conditions: list[Any] = [_b.state == "failed"]
        if after is not None:
            conditions.append(_b.id > after)
        return self._records(*conditions, limit=limit)

    def get_batch(self, batch_id: str) -> OutboxBatchRecord | None:
        """One batch, or ``None``."""
        found = self._records(outbox_batches.c.id == batch_id, limit=1)
        return found[0] if found else None

    def replay_failed(self, batch_id: str | None, *, at: datetime) -> int:
        """Give one failed batch (``None``: every one) a fresh ladder: pending, attempts 0,
        due at ``at``; how many."""
        condition = _b.state == "failed"
        if batch_id is not None:
            condition = and_(condition, _b.id == batch_id)
        result = self.connection.execute(
            update(outbox_batches)
            .where(condition)
            .values(state="pending", attempts=0, next_attempt_at=at, settled_at=None)
        )
        return int(result.rowcount)

    def retry_waiting_now(self, *, now: datetime) -> int:
        """Make every batch waiting for its next attempt (pending, failed at least once, due
        after ``now``) due at ``now``, in one statement; attempts are kept, so the retry ladder
        continues from its rung. Failed, delivered, sending and never-tried batches are left
        alone. How many."""
        result = self.connection.execute(
            update(outbox_batches)
            .where(
                _b.state == "pending",
                _b.attempts > 0,
                _b.next_attempt_at > now,
                _b.lease_until.is_(None),
            )
            .values(next_attempt_at=now)
        )
        return int(result.rowcount)
