"""Claiming and settling outbox batches for the sync runner.

A claim is one short write transaction: the oldest due batches are leased, then, while there
is room, the oldest queued events are frozen directly into leased batches and returned with
them. A batch owns the events with ``seq`` in ``[first_seq, last_seq]``; the queue is every
event above the newest batch's ``last_seq`` (the frontier). A range never reaches past the
outbox's commit horizon (:class:`~newsletter_connector.storage.host_sql.CommitHorizon`), so no
event can still commit inside it.

PostgreSQL: two runners skip each other's due batches (``SKIP LOCKED``) and take turns to freeze (a
transaction-level advisory lock). The freeze's first two statements hold the outbox lock, a
session-level lock: if either fails the connection is invalidated, never pooled. MySQL and
MariaDB: the same, with the freeze's turn a row of ``nc_commit_horizons`` locked to the claim's
end and the horizon read beside the claim (``CommitHorizon.horizon``). SQLite: a claim
holds the only write lock and seqs are never reused (``AUTOINCREMENT``). See
docs/contributing/decisions/performance.md, "Performance and reliability" (seq ranges, primary-key
order).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Text, bindparam, cast, func, select, text, update
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import TextClause

from ...storage.host_sql import CommitHorizon
from ...storage.outbox_records import ClaimedBatch, OutboxEvent
from .engine import is_mysql
from .tables import commit_horizons, outbox_batches, outbox_events
from .upserts import insert_unless_stored

#: A queued event as fetched: ``(seq, event_id, event_type, occurred_at, payload_json)``.
_QueuedRow = tuple[int, str, str, datetime, str]

_b = outbox_batches.c
_e = outbox_events.c

# Taken shared by every enqueue before it draws its seq (SqlOutbox.enqueue), exclusively by the
# freeze until its snapshot is taken. "nlobox".
OUTBOX_LOCK_ID = 0x6E6C_6F62_6F78
# Freezes take turns (transaction-scoped, exclusive): the next reads the frontier this one left.
FREEZE_LOCK_ID = OUTBOX_LOCK_ID + 1
OUTBOX_HORIZON = CommitHorizon(OUTBOX_LOCK_ID, _e.seq)

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
    select(_b.id, _e.seq, _e.event_id, _e.event_type, _e.occurred_at, _PAYLOAD_TEXT)
    .select_from(outbox_batches.join(outbox_events, _e.seq.between(_b.first_seq, _b.last_seq)))
    .where(_b.id.in_(bindparam("ids", expanding=True)))
    .order_by(_e.seq)
)
_FRONTIER = select(func.coalesce(func.max(_b.last_seq), 0))
# The oldest queued events, by some bounds (below).
_OLDEST = (
    select(_e.seq, _e.event_id, _e.event_type, _e.occurred_at, _PAYLOAD_TEXT)
    .order_by(_e.seq)
    .limit(bindparam("limit"))
)
# SQLite's queue: every stored seq is final there.
_QUEUED = _OLDEST.where(_e.seq > bindparam("frontier"))
# MySQL's and MariaDB's: up to the horizon read just before, the freeze's turn taken.
_QUEUED_TO = _QUEUED.where(_e.seq <= bindparam("horizon"))
_FREEZE_TURN = (
    select(commit_horizons.c.name)
    .where(commit_horizons.c.name == bindparam("name"))
    .with_for_update()
)
# PostgreSQL's: take the freeze turn, then the outbox lock exclusively (it waits for enqueues
# in flight); sorts and JIT off for the claim, as the queue's row estimate is often stale.
_TAKE_TURN_AND_BARRIER = text(
    "SELECT pg_advisory_xact_lock(:freeze_lock), pg_advisory_lock(:outbox_lock), "
    "set_config('enable_sort', 'off', true), set_config('jit', 'off', true)"
)
# Read in a snapshot taken while the lock is held; MATERIALIZED: evaluated once, letting the
# lock go before the range it bounds is read.
_HORIZON = (
    select(
        select(func.max(_e.seq)).scalar_subquery().label("horizon"),
        _FRONTIER.scalar_subquery().label("frontier"),
        func.pg_advisory_unlock(bindparam("outbox_lock")).label("barrier_released"),
    )
    .cte("horizon")
    .prefix_with("MATERIALIZED")
)
_QUEUED_AT_HORIZON = _OLDEST.where(
    _e.seq > select(_HORIZON.c.frontier).scalar_subquery(),
    _e.seq <= select(_HORIZON.c.horizon).scalar_subquery(),
)


@functools.cache
def _new_batches(count: int) -> TextClause:
    """One multi-row ``INSERT`` of ``count`` new leased batches; parameters ``now``,
    ``lease_until``, and ``id_N``, ``first_seq_N``, ``last_seq_N`` for each row ``N``.

    Textual and cached: SQLAlchemy compiles a multi-row ``insert().values()`` afresh on every
    execution (bench: sync)."""
    rows = ", ".join(
        f"(:id_{n}, 'sending', 1, :now, :lease_until, :now, :first_seq_{n}, :last_seq_{n})"
        for n in range(count)
    )
    columns = "id, state, attempts, next_attempt_at, lease_until, created_at, first_seq, last_seq"
    # Placeholders only: every value is a bound parameter.
    sql = f"INSERT INTO {outbox_batches.name} ({columns}) VALUES {rows}"  # noqa: S608
    return text(sql).bindparams(
        bindparam("now", type_=_b.next_attempt_at.type),
        bindparam("lease_until", type_=_b.lease_until.type),
    )


_RELEASE = (
    update(outbox_batches)
    .where(
        _b.id.in_(bindparam("ids", expanding=True)),
        _b.state == "sending",
        _b.lease_until == bindparam("claimed_lease"),
    )
    .values(state="pending", attempts=_b.attempts - 1, lease_until=None)
)


def claim_batches(
    connection: Connection,
    *,
    now: datetime,
    lease_until: datetime,
    batch_size: int,
    max_batches: int,
) -> list[ClaimedBatch]:
    """See :meth:`.SqlOutbox.claim_batches`."""
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
        members[row[0]].append(OutboxEvent(*row[1:]))
    return [
        ClaimedBatch(batch_id, int(attempts) + 1, lease_until, members[batch_id])
        for batch_id, (_, attempts) in zip(ids, due, strict=True)
    ]


def _queued_rows(connection: Connection, *, limit: int) -> list[_QueuedRow]:
    """Up to ``limit`` of the oldest queued events (above the frontier; on PostgreSQL, at or
    below the horizon too), oldest first, as rows."""
    if connection.dialect.name == "postgresql":
        try:
            connection.execute(
                _TAKE_TURN_AND_BARRIER,
                {"freeze_lock": FREEZE_LOCK_ID, "outbox_lock": OUTBOX_LOCK_ID},
            )
            rows = connection.execute(
                _QUEUED_AT_HORIZON, {"outbox_lock": OUTBOX_LOCK_ID, "limit": limit}
            ).all()
        except BaseException:
            connection.invalidate()  # it may still hold the barrier, a session-level lock
            raise
    elif is_mysql(connection.dialect.name):
        _take_freeze_turn(connection)
        horizon = OUTBOX_HORIZON.horizon(connection)
        if horizon is None:
            return []
        frontier = int(connection.scalar(_FRONTIER) or 0)
        rows = connection.execute(
            _QUEUED_TO, {"frontier": frontier, "horizon": horizon, "limit": limit}
        ).all()
    else:
        frontier = int(connection.scalar(_FRONTIER) or 0)
        rows = connection.execute(_QUEUED, {"frontier": frontier, "limit": limit}).all()
    return [tuple(row) for row in rows]


def _take_freeze_turn(connection: Connection) -> None:
    """MySQL, MariaDB: lock the freeze's row of ``nc_commit_horizons`` to the transaction's
    end (storing it when it is not there, which locks it as well)."""
    name = {"name": str(FREEZE_LOCK_ID)}
    if connection.execute(_FREEZE_TURN, name).first() is None and not insert_unless_stored(
        connection, commit_horizons, name
    ):
        connection.execute(_FREEZE_TURN, name).one()  # stored by another runner meanwhile


def _freeze_leased(
    connection: Connection,
    *,
    now: datetime,
    lease_until: datetime,
    batch_size: int,
    batches: int,
) -> list[ClaimedBatch]:
    rows = _queued_rows(connection, limit=batch_size * batches)
    if not rows:
        return []
    chunks = [rows[start : start + batch_size] for start in range(0, len(rows), batch_size)]
    claimed = [
        ClaimedBatch(str(uuid.uuid4()), 1, lease_until, [OutboxEvent(*row) for row in chunk])
        for chunk in chunks
    ]
    values: dict[str, Any] = {"now": now, "lease_until": lease_until}
    for n, (batch, chunk) in enumerate(zip(claimed, chunks, strict=True)):
        values[f"id_{n}"] = batch.id
        values[f"first_seq_{n}"] = chunk[0][0]
        values[f"last_seq_{n}"] = chunk[-1][0]
    connection.execute(_new_batches(len(claimed)), values)
    return claimed


def release_claims(
    connection: Connection, batch_ids: Sequence[str], *, lease_until: datetime
) -> int:
    """See :meth:`.SqlOutbox.release_claims`."""
    if not batch_ids:
        return 0
    result = connection.execute(_RELEASE, {"ids": list(batch_ids), "claimed_lease": lease_until})
    return int(result.rowcount)
