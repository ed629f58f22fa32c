"""The SQL outbox: events queued with the change that caused them, for the sync runner.

Claims (several runners may claim at once) live in :mod:`.outbox_claims`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from ...storage import ClaimedBatch, OutboxBatchRecord, OutboxStatus
from . import outbox_claims
from .tables import outbox_batches, outbox_events

BATCH_STATES = ("pending", "sending", "delivered", "failed")


# Every signup and change queues events: the statement is built once (issue 10).
_ENQUEUE = insert(outbox_events)


class SqlOutbox:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

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
        self.connection.execute(
            _ENQUEUE,
            {
                "event_id": event_id,
                "event_type": event_type,
                "occurred_at": occurred_at,
                "payload": payload,
                "subscriber_key": subscriber_key,
                "created_at": created_at,
            },
        )

    def discard_for_subscriber(self, subscriber_key: str) -> int:
        delivered = select(outbox_batches.c.id).where(outbox_batches.c.state == "delivered")
        undelivered = self.connection.scalar(
            select(func.count())
            .select_from(outbox_events)
            .where(
                outbox_events.c.subscriber_key == subscriber_key,
                or_(outbox_events.c.batch_id.is_(None), outbox_events.c.batch_id.not_in(delivered)),
            )
        )
        self.connection.execute(
            delete(outbox_events).where(outbox_events.c.subscriber_key == subscriber_key)
        )
        return int(undelivered or 0)

    # -- delivery (the sync runner) ----------------------------------------------------------

    def claim_batches(
        self, *, now: datetime, lease_until: datetime, batch_size: int, max_batches: int
    ) -> list[ClaimedBatch]:
        return outbox_claims.claim_batches(
            self.connection,
            now=now,
            lease_until=lease_until,
            batch_size=batch_size,
            max_batches=max_batches,
        )

    def release_claims(self, batch_ids: Sequence[str], *, lease_until: datetime) -> int:
        return outbox_claims.release_claims(self.connection, batch_ids, lease_until=lease_until)

    def _settle(self, batch_id: str, lease_until: datetime | None, **values: Any) -> bool:
        batches = outbox_batches.c
        conditions = [batches.id == batch_id, batches.state == "sending"]
        if lease_until is not None:
            conditions.append(batches.lease_until == lease_until)
        result = self.connection.execute(
            update(outbox_batches).where(*conditions).values(lease_until=None, **values)
        )
        return bool(result.rowcount)

    def settle_delivered(
        self, batch_ids: Sequence[str], *, at: datetime, lease_until: datetime | None = None
    ) -> int:
        if not batch_ids:
            return 0
        batches = outbox_batches.c
        conditions = [batches.id.in_(list(batch_ids)), batches.state == "sending"]
        if lease_until is not None:
            conditions.append(batches.lease_until == lease_until)
        result = self.connection.execute(
            update(outbox_batches)
            .where(*conditions)
            .values(lease_until=None, state="delivered", settled_at=at, last_error=None)
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
        return self._settle(batch_id, lease_until, state="failed", settled_at=at, last_error=error)

    def release_expired_leases(self, *, now: datetime) -> int:
        batches = outbox_batches.c
        result = self.connection.execute(
            update(outbox_batches)
            .where(batches.state == "sending", batches.lease_until < now)
            .values(state="pending", lease_until=None, next_attempt_at=now)
        )
        return int(result.rowcount)

    def prune_delivered(self, *, settled_before: datetime, limit: int = 1000) -> int:
        batches = outbox_batches.c
        ids = list(
            self.connection.scalars(
                select(batches.id)
                .where(batches.state == "delivered", batches.settled_at < settled_before)
                .order_by(batches.settled_at)
                .limit(limit)
            )
        )
        if not ids:
            return 0
        self.connection.execute(delete(outbox_events).where(outbox_events.c.batch_id.in_(ids)))
        result = self.connection.execute(delete(outbox_batches).where(batches.id.in_(ids)))
        return int(result.rowcount)

    def status(self) -> OutboxStatus:
        batches = outbox_batches.c
        events = outbox_events.c
        counts = dict.fromkeys(BATCH_STATES, 0)
        for state, count in self.connection.execute(
            select(batches.state, func.count()).group_by(batches.state)
        ):
            counts[str(state)] = int(count)
        joined = outbox_events.outerjoin(outbox_batches, events.batch_id == batches.id)
        undelivered = or_(events.batch_id.is_(None), batches.state.in_(("pending", "sending")))
        row = self.connection.execute(
            select(
                func.count().filter(events.batch_id.is_(None)),
                func.count().filter(undelivered),
                func.count().filter(batches.state == "failed"),
                func.min(events.occurred_at).filter(undelivered),
            ).select_from(joined)
        ).one()
        last_error = self.connection.scalar(
            select(batches.last_error)
            .where(batches.last_error.is_not(None), batches.state.in_(("pending", "failed")))
            .order_by(func.coalesce(batches.settled_at, batches.next_attempt_at).desc())
            .limit(1)
        )
        return OutboxStatus(
            batches=counts,
            unbatched=int(row[0]),
            undelivered_events=int(row[1]),
            failed_events=int(row[2]),
            oldest_pending_at=row[3],
            last_error=last_error,
        )

    def _records(self, *conditions: Any, limit: int) -> list[OutboxBatchRecord]:
        batches = outbox_batches.c
        members = (
            select(func.count()).where(outbox_events.c.batch_id == batches.id).scalar_subquery()
        )
        rows = self.connection.execute(
            select(
                batches.id,
                batches.state,
                batches.attempts,
                batches.next_attempt_at,
                batches.last_error,
                batches.created_at,
                batches.settled_at,
                members,
            )
            .where(*conditions)
            .order_by(batches.id)
            .limit(limit)
        )
        return [
            OutboxBatchRecord(
                id=str(r[0]),
                state=str(r[1]),
                attempts=int(r[2]),
                next_attempt_at=r[3],
                last_error=r[4],
                created_at=r[5],
                settled_at=r[6],
                event_count=int(r[7]),
            )
            for r in rows
        ]

    def failed_batches(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[OutboxBatchRecord]:
        batches = outbox_batches.c
        conditions: list[Any] = [batches.state == "failed"]
        if after is not None:
            conditions.append(batches.id > after)
        return self._records(*conditions, limit=limit)

    def get_batch(self, batch_id: str) -> OutboxBatchRecord | None:
        found = self._records(outbox_batches.c.id == batch_id, limit=1)
        return found[0] if found else None

    def replay_failed(self, batch_id: str | None, *, at: datetime) -> int:
        batches = outbox_batches.c
        condition = batches.state == "failed"
        if batch_id is not None:
            condition = and_(condition, batches.id == batch_id)
        result = self.connection.execute(
            update(outbox_batches)
            .where(condition)
            .values(state="pending", attempts=0, next_attempt_at=at, settled_at=None)
        )
        return int(result.rowcount)
