"""``SqlBulkJobs``: bulk jobs on ``nc_bulk_jobs``, its leases those of :mod:`.leases`."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from ...storage.bulk_jobs import BulkJobProgress, BulkJobRecord, NewBulkJob
from ...storage.subscriber_query import SubscriberFilter
from . import leases
from .jobs import JobTable
from .record_builders import inserted_row
from .repository import SqlRepository
from .tables import bulk_jobs

#: Past every id: the walk starts with the subscribers of ``requested_at`` itself.
_PAST_EVERY_ID = 2**63 - 1
_UNFINISHED = bulk_jobs.c.finished_at.is_(None)


def _record(row: Mapping[Any, Any]) -> BulkJobRecord:
    values = dict(row)
    values["filter"] = SubscriberFilter.from_json(values["filter"])
    del values["lease"], values["lease_until"]
    return BulkJobRecord(**values)


#: The bulk acts' rows for :class:`~.jobs.SqlJobs`: unfinished ones wait for a runner.
BULK_JOBS = JobTable(bulk_jobs, _UNFINISHED, _record)


class SqlBulkJobs(SqlRepository):
    """Bulk jobs by id (ids grow with each job)."""

    def add(self, job: NewBulkJob) -> BulkJobRecord:
        """Store a new job, its walk starting at ``requested_at``."""
        statement = insert(bulk_jobs).values(
            act=job.act,
            filter=job.filter.as_json(),
            filter_text=job.filter_text,
            requested_by=job.requested_by,
            requested_at=job.requested_at,
            expected=job.expected,
            expected_exact=job.expected_exact,
            position_at=job.requested_at,
            position_id=_PAST_EVERY_ID,
            changed=0,
            unchanged=0,
            missing=0,
        )
        return _record(inserted_row(self.connection, bulk_jobs, statement))

    def get(self, job_id: int) -> BulkJobRecord | None:
        """The job, or ``None``."""
        row = self.connection.execute(select(bulk_jobs).where(bulk_jobs.c.id == job_id))
        found = row.mappings().first()
        return None if found is None else _record(found)

    def recent(self, limit: int) -> list[BulkJobRecord]:
        """The newest ``limit`` jobs, newest first."""
        newest = select(bulk_jobs).order_by(bulk_jobs.c.id.desc()).limit(limit)
        rows = self.connection.execute(newest)
        return [_record(row) for row in rows.mappings()]

    def claim(self, *, lease: str, now: datetime, until: datetime) -> BulkJobRecord | None:
        """The oldest unfinished job whose lease has ended (or that never had one), now
        leased under the token ``lease`` until ``until`` (its ``started_at`` set on its first
        claim); ``None`` when there is none. Of racing claims, one gets each job."""
        taken = leases.claim(
            self.connection, bulk_jobs, _UNFINISHED, lease=lease, now=now, until=until
        )
        return None if taken is None else _record(taken)

    def advance(
        self, job_id: int, progress: BulkJobProgress, *, lease: str, now: datetime, until: datetime
    ) -> bool:
        """Add ``progress`` to the job held under ``lease`` and extend the lease to ``until``
        (finishing it at ``now`` when ``progress.finished``); false, changing nothing, when the
        job is finished or its lease is another's. A finished job's filter is forgotten.
        Called last in the chunk's transaction:
        false means the chunk must roll back."""
        at, ident = progress.position
        values: dict[str, Any] = {
            "position_at": at,
            "position_id": ident,
            "changed": bulk_jobs.c.changed + progress.changed,
            "unchanged": bulk_jobs.c.unchanged + progress.unchanged,
            "missing": bulk_jobs.c.missing + progress.missing,
        }
        if progress.finished:
            values.update(finished_at=now, filter={})
        return leases.advance(
            self.connection, bulk_jobs, job_id, _UNFINISHED, lease=lease, until=until, values=values
        )

    def release(self, job_id: int, *, lease: str) -> None:
        """End the lease ``lease`` on the job now (a runner pausing between chunks), so the
        next claim by any runner takes it; nothing when the lease is another's."""
        leases.release(self.connection, bulk_jobs, job_id, lease=lease)

    def stop(self, job_id: int, *, by: str, at: datetime) -> bool:
        """Finish an unfinished job now, its counts as they are (its filter forgotten);
        whether it was unfinished."""
        result = self.connection.execute(
            update(bulk_jobs)
            .where(bulk_jobs.c.id == job_id, _UNFINISHED)
            .values(finished_at=at, stopped_by=by, filter={})
        )
        return bool(result.rowcount)
