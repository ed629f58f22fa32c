"""``BulkJobRepository`` on ``nc_bulk_jobs``: a lease is a token and an expiry on the job's
row, taken and checked by conditional updates, so racing runners serialise on the row."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, or_, select, update

from ...storage.bulk_jobs import BulkJobProgress, BulkJobRecord, NewBulkJob
from ...storage.subscriber_query import SubscriberFilter
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


class SqlBulkJobs(SqlRepository):
    def add(self, job: NewBulkJob) -> BulkJobRecord:
        statement = (
            insert(bulk_jobs)
            .values(
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
            .returning(*bulk_jobs.c)
        )
        return _record(self.connection.execute(statement).mappings().one())

    def get(self, job_id: int) -> BulkJobRecord | None:
        row = self.connection.execute(select(bulk_jobs).where(bulk_jobs.c.id == job_id))
        found = row.mappings().first()
        return None if found is None else _record(found)

    def recent(self, limit: int) -> list[BulkJobRecord]:
        newest = select(bulk_jobs).order_by(bulk_jobs.c.id.desc()).limit(limit)
        rows = self.connection.execute(newest)
        return [_record(row) for row in rows.mappings()]

    def claim(self, *, lease: str, now: datetime, until: datetime) -> BulkJobRecord | None:
        free = or_(bulk_jobs.c.lease_until.is_(None), bulk_jobs.c.lease_until <= now)
        candidates = self.connection.execute(
            select(bulk_jobs.c.id).where(_UNFINISHED, free).order_by(bulk_jobs.c.id).limit(5)
        ).scalars()
        for job_id in list(candidates):
            # Re-checked by the update itself: of two runners, the second finds it leased.
            taken = (
                self.connection.execute(
                    update(bulk_jobs)
                    .where(bulk_jobs.c.id == job_id, _UNFINISHED, free)
                    .values(
                        lease=lease,
                        lease_until=until,
                        started_at=func.coalesce(bulk_jobs.c.started_at, now),
                    )
                    .returning(*bulk_jobs.c)
                )
                .mappings()
                .first()
            )
            if taken is not None:
                return _record(taken)
        return None

    def advance(
        self, job_id: int, progress: BulkJobProgress, *, lease: str, now: datetime, until: datetime
    ) -> bool:
        at, ident = progress.position
        result = self.connection.execute(
            update(bulk_jobs)
            .where(bulk_jobs.c.id == job_id, bulk_jobs.c.lease == lease, _UNFINISHED)
            .values(
                position_at=at,
                position_id=ident,
                changed=bulk_jobs.c.changed + progress.changed,
                unchanged=bulk_jobs.c.unchanged + progress.unchanged,
                missing=bulk_jobs.c.missing + progress.missing,
                lease_until=until,
                **({"finished_at": now, "filter": {}} if progress.finished else {}),
            )
        )
        return bool(result.rowcount)

    def release(self, job_id: int, *, lease: str) -> None:
        self.connection.execute(
            update(bulk_jobs)
            .where(bulk_jobs.c.id == job_id, bulk_jobs.c.lease == lease)
            .values(lease=None, lease_until=None)
        )

    def stop(self, job_id: int, *, by: str, at: datetime) -> bool:
        result = self.connection.execute(
            update(bulk_jobs)
            .where(bulk_jobs.c.id == job_id, _UNFINISHED)
            .values(finished_at=at, stopped_by=by, filter={})
        )
        return bool(result.rowcount)
