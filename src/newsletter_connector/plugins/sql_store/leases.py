"""Job leases on a job table's row (bulk acts, imports, any kind of :mod:`.jobs`): a lease is a
token and an expiry on the row, taken and checked by conditional updates, so racing runners
serialise on the row. A table using them has the columns ``id``, ``requested_at``, ``lease``,
``lease_until`` and ``started_at``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, Table, func, or_, select, update
from sqlalchemy.engine import Connection

from .record_builders import updated_row

#: The columns every job table has: the contract the one claim and lease read.
LEASE_COLUMNS = frozenset({"id", "requested_at", "started_at", "lease", "lease_until"})
#: Candidates read per claim: the first few waiting jobs, in case another runner takes one.
CANDIDATES = 5


def claim(
    connection: Connection,
    table: Table,
    waiting: ColumnElement[bool],
    *,
    lease: str,
    now: datetime,
    until: datetime,
) -> RowMapping | None:
    """The row of the oldest job matching ``waiting`` whose lease has ended (or that never had
    one), now leased under ``lease`` until ``until``, its ``started_at`` set on its first
    claim; ``None`` when there is none."""
    c = table.c
    free = or_(c.lease_until.is_(None), c.lease_until <= now)
    candidates = connection.execute(
        select(c.id).where(waiting, free).order_by(c.id).limit(CANDIDATES)
    ).scalars()
    for job_id in list(candidates):
        taken = take(connection, table, job_id, waiting, lease=lease, now=now, until=until)
        if taken is not None:
            return taken
    return None


def take(
    connection: Connection,
    table: Table,
    job_id: int,
    waiting: ColumnElement[bool],
    *,
    lease: str,
    now: datetime,
    until: datetime,
) -> RowMapping | None:
    """The row of job ``job_id``, leased under ``lease`` until ``until`` (its
    ``started_at`` set on its first claim), when it still matches ``waiting`` and its lease has
    ended (or it never had one); else ``None``."""
    c = table.c
    free = or_(c.lease_until.is_(None), c.lease_until <= now)
    # Re-checked by the update itself: of two runners, the second finds it leased.
    statement = (
        update(table)
        .where(c.id == job_id, waiting, free)
        .values(lease=lease, lease_until=until, started_at=func.coalesce(c.started_at, now))
    )
    return updated_row(connection, table, statement, job_id)


def advance(
    connection: Connection,
    table: Table,
    job_id: int,
    held: ColumnElement[bool],
    *,
    lease: str,
    until: datetime,
    values: dict[str, Any],
) -> bool:
    """Write ``values`` to the job held under ``lease`` (and still ``held``), its lease
    extended to ``until``; whether it was."""
    c = table.c
    result = connection.execute(
        update(table)
        .where(c.id == job_id, c.lease == lease, held)
        .values(lease_until=until, **values)
    )
    return bool(result.rowcount)


def release(connection: Connection, table: Table, job_id: int, *, lease: str) -> None:
    """End the lease ``lease`` on the job now; nothing when the lease is another's."""
    c = table.c
    connection.execute(
        update(table).where(c.id == job_id, c.lease == lease).values(lease=None, lease_until=None)
    )
