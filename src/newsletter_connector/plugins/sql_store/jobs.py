"""``SqlJobs``: the one lease over every kind of durable job (acts on all matching, imports).

Each kind keeps its rows in a :class:`JobTable`: a table with the lease columns of
:mod:`.leases` (``id``, ``requested_at``, ``started_at``, ``lease``, ``lease_until``) and a
condition saying which of its rows wait for a runner. A claim takes the job asked for first
among the waiting jobs of every kind given, so one runner loop serves them all."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, Table, or_, select

from . import leases
from .repository import SqlRepository


@dataclass(frozen=True)
class JobTable:
    """Where the jobs of one kind lie: ``table`` (with the lease columns), the rows that wait
    for a runner (``waiting``), and ``record``, which makes a row the kind's job record."""

    table: Table
    waiting: ColumnElement[bool]
    record: Callable[[RowMapping], Any]


@dataclass(frozen=True)
class ClaimedJob:
    """A job a claim took: its ``kind``, ``id`` and the kind's ``record`` of it."""

    kind: str
    id: int
    record: Any


class SqlJobs(SqlRepository):
    """Claims and releases of jobs of any kind."""

    def claim(
        self, tables: Mapping[str, JobTable], *, lease: str, now: datetime, until: datetime
    ) -> ClaimedJob | None:
        """The job asked for first (by ``requested_at``, then the order of ``tables``, then
        id) among the waiting jobs of ``tables`` whose lease has ended (or that never had one),
        taken under ``lease`` until ``until``; ``None`` when there is none. Of racing claims,
        one gets each job."""
        candidates: list[tuple[datetime, int, int, str]] = []
        for order, (kind, where) in enumerate(tables.items()):
            c = where.table.c
            free = or_(c.lease_until.is_(None), c.lease_until <= now)
            rows = self.connection.execute(
                select(c.requested_at, c.id)
                .where(where.waiting, free)
                .order_by(c.id)
                .limit(leases.CANDIDATES)
            )
            candidates.extend((at, order, ident, kind) for at, ident in rows)
        for _at, _order, job_id, kind in sorted(candidates):
            where = tables[kind]
            taken = leases.take(
                self.connection,
                where.table,
                job_id,
                where.waiting,
                lease=lease,
                now=now,
                until=until,
            )
            if taken is not None:
                return ClaimedJob(kind, job_id, where.record(taken))
        return None

    def release(self, where: JobTable, job_id: int, *, lease: str) -> None:
        """End the lease ``lease`` on the job now; nothing when the lease is another's."""
        leases.release(self.connection, where.table, job_id, lease=lease)
