"""The SQL outbox: events queued with the change that caused them, for the sync runner."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, or_, select
from sqlalchemy.engine import Connection

from .tables import outbox_batches, outbox_events


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
            insert(outbox_events).values(
                event_id=event_id,
                event_type=event_type,
                occurred_at=occurred_at,
                payload=payload,
                subscriber_key=subscriber_key,
                created_at=created_at,
            )
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
