"""Claiming and settling outbox batches for the sync runner (the SQL store's delivery half).

A claim is one short write transaction of a handful of statements, however many batches it
takes (issue 10): the oldest due batches are leased, then, while there is room, the oldest
unbatched events are frozen **directly into leased batches** and returned with them, so no
batch is written as pending and read back. A batch still owns its events by ``batch_id``
(never by a ``seq`` range: events inserted by concurrent transactions can commit out of ``seq``
order, and a range would skip one that commits late).

Concurrency: on PostgreSQL every row taken is selected ``FOR UPDATE SKIP LOCKED`` (two runners
skip each other's rows); on SQLite the store's write transactions begin ``BEGIN IMMEDIATE``, so
a claim holds the only write lock.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Text, bindparam, cast, insert, select, text, update
from sqlalchemy.engine import Connection

from ...storage import ClaimedBatch, OutboxEvent
from .tables import outbox_batches, outbox_events

_b = outbox_batches.c
_e = outbox_events.c

# Built once: a claim runs every few milliseconds under load.
_DUE = (
    select(_b.id, _b.attempts)
    .where(_b.state == "pending", _b.next_attempt_at <= bindparam("now"))
    .order_by(_b.next_attempt_at, _b.first_seq, _b.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)
_LEASE_DUE = (
    update(outbox_batches)
    .where(_b.id.in_(bindparam("ids", expanding=True)))
    .values(state="sending", attempts=_b.attempts + 1, lease_until=bindparam("lease_until"))
)
# Payloads are read as their stored JSON text and handed on undecoded (see OutboxEvent).
_PAYLOAD_TEXT = cast(_e.payload, Text)
_MEMBERS = (
    select(_e.batch_id, _e.seq, _e.event_id, _e.event_type, _e.occurred_at, _PAYLOAD_TEXT)
    .where(_e.batch_id.in_(bindparam("ids", expanding=True)))
    .order_by(_e.seq)
)
_UNBATCHED = (
    select(_e.seq, _e.event_id, _e.event_type, _e.occurred_at, _PAYLOAD_TEXT)
    .where(_e.batch_id.is_(None))
    .order_by(_e.seq)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)
_NEW_BATCH = insert(outbox_batches)
# By seq alone (the primary key): the rows were read by this transaction FOR UPDATE (SQLite:
# under its write lock), so nobody else can have batched or deleted them since. Adding
# ``batch_id IS NULL`` made PostgreSQL scan every unbatched event per batch.
_JOIN = (
    update(outbox_events)
    .where(_e.seq.in_(bindparam("seqs", expanding=True)))
    .values(batch_id=bindparam("batch_id"))
)
# The queue's row estimate is often far too low (it churns faster than ANALYZE runs): then
# PostgreSQL sorted every unbatched event rather than read the partial index in seq order.
# Scoped to the claim's transaction.
_PREFER_INDEX_ORDER = text("SET LOCAL enable_sort = off")
_RELEASE = (
    update(outbox_batches)
    .where(
        _b.id.in_(bindparam("ids", expanding=True)),
        _b.state == "sending",
        _b.lease_until == bindparam("claimed_lease"),
    )
    .values(state="pending", attempts=_b.attempts - 1, lease_until=None)
)


def _event(row: Sequence[Any]) -> OutboxEvent:
    seq, event_id, event_type, occurred_at, payload_json = row
    return OutboxEvent.from_stored_json(
        int(seq), str(event_id), str(event_type), occurred_at, str(payload_json)
    )


def claim_batches(
    connection: Connection,
    *,
    now: datetime,
    lease_until: datetime,
    batch_size: int,
    max_batches: int,
) -> list[ClaimedBatch]:
    """See :meth:`~newsletter_connector.storage.OutboxDeliveryRepository.claim_batches`."""
    claimed = _lease_due(connection, now=now, lease_until=lease_until, limit=max_batches)
    room = max_batches - len(claimed)
    if room > 0:
        claimed += _freeze_leased(
            connection, now=now, lease_until=lease_until, batch_size=batch_size, batches=room
        )
    return claimed


def _lease_due(
    connection: Connection, *, now: datetime, lease_until: datetime, limit: int
) -> list[ClaimedBatch]:
    due = connection.execute(_DUE, {"now": now, "limit": limit}).all()
    if not due:
        return []
    ids = [str(row[0]) for row in due]
    connection.execute(_LEASE_DUE, {"ids": ids, "lease_until": lease_until})
    members: dict[str, list[OutboxEvent]] = {batch_id: [] for batch_id in ids}
    for row in connection.execute(_MEMBERS, {"ids": ids}):
        members[str(row[0])].append(_event(row[1:]))
    return [
        ClaimedBatch(batch_id, int(attempts) + 1, lease_until, members[batch_id])
        for batch_id, (_, attempts) in zip(ids, due, strict=True)
    ]


def _freeze_leased(
    connection: Connection,
    *,
    now: datetime,
    lease_until: datetime,
    batch_size: int,
    batches: int,
) -> list[ClaimedBatch]:
    if connection.dialect.name == "postgresql":
        connection.execute(_PREFER_INDEX_ORDER)
    events = [
        _event(row) for row in connection.execute(_UNBATCHED, {"limit": batch_size * batches}).all()
    ]
    if not events:
        return []
    claimed = [
        ClaimedBatch(str(uuid.uuid4()), 1, lease_until, events[start : start + batch_size])
        for start in range(0, len(events), batch_size)
    ]
    connection.execute(
        _NEW_BATCH,
        [
            {
                "id": batch.id,
                "state": "sending",
                "attempts": 1,
                "next_attempt_at": now,
                "lease_until": lease_until,
                "created_at": now,
                "first_seq": batch.events[0].seq,
            }
            for batch in claimed
        ],
    )
    for batch in claimed:
        connection.execute(_JOIN, {"seqs": [e.seq for e in batch.events], "batch_id": batch.id})
    return claimed


def release_claims(
    connection: Connection, batch_ids: Sequence[str], *, lease_until: datetime
) -> int:
    """See :meth:`~newsletter_connector.storage.OutboxDeliveryRepository.release_claims`."""
    if not batch_ids:
        return 0
    result = connection.execute(_RELEASE, {"ids": list(batch_ids), "claimed_lease": lease_until})
    return int(result.rowcount)
