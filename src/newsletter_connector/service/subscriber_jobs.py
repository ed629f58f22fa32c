"""Acts on every subscriber matching a filter (the admin list's "all N matching"), as jobs
the sync runner works through on each loop (:meth:`SubscriberJobService.work`, a periodic
task).

A job walks the matching subscribers newest first from the moment it was asked for, in chunks
of :data:`CHUNK`. Each chunk does to every subscriber what the single act does
(:meth:`SubscriberBulkService.act_in`, queueing the same events) and records the job's new
position and counts in the same transaction, under the job's lease: a runner that was killed
leaves its chunk undone, and one whose lease went to another runner (or whose job was
stopped) cannot commit its chunk, so no act is applied twice and every count is exact."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime

from ..errors import InvalidRequest, NotFound
from ..plugins.sql_store.bulk_jobs import SqlBulkJobs
from ..plugins.sql_store.store import SqlUnitOfWork
from ..storage.bulk_jobs import BulkJobProgress, BulkJobRecord, NewBulkJob
from ..storage.subscriber_query import SubscriberFilter, SubscriberQuery
from .job_slices import LEASE, SLICE_SECONDS, work_in_slice
from .subscriber_bulk import BULK_ACTS, BulkResult, SubscriberBulkService
from .subscriber_list import BUDGET

#: Subscribers acted on per transaction (bench: admin_bulk_job).
CHUNK = 100


class LeaseLost(Exception):
    """The job's lease is another runner's, or the job was stopped: the chunk rolls back."""


class SubscriberJobService:
    """``service.subscriber_jobs``."""

    def __init__(self, bulk: SubscriberBulkService) -> None:
        self.bulk = bulk
        self.context = bulk.subscribers.context

    def start(
        self,
        act: str,
        flt: SubscriberFilter,
        *,
        filter_text: str,
        requested_by: str,
        expected: int,
        expected_exact: bool,
    ) -> BulkJobRecord:
        """Queue ``act`` on every subscriber matching ``flt`` now; the sync runner does it.
        :class:`InvalidRequest` names ``act`` when it is not one of the bulk acts."""
        if act not in BULK_ACTS:
            raise InvalidRequest(f"act must be one of: {', '.join(BULK_ACTS)}", field="act")
        job = NewBulkJob(
            act=act,
            filter=flt,
            filter_text=filter_text[:2000],
            requested_by=requested_by,
            requested_at=self.context.clock(),
            expected=expected,
            expected_exact=expected_exact,
        )
        with self.context.storage.transaction() as uow:
            return uow.bulk_jobs.add(job)

    def get(self, job_id: int) -> BulkJobRecord:
        """The job; :class:`NotFound` when there is none."""
        with self.context.storage.transaction(write=False) as uow:
            job = uow.bulk_jobs.get(job_id)
        if job is None:
            raise NotFound("no such bulk act")
        return job

    def recent(self, limit: int = 10) -> list[BulkJobRecord]:
        """The newest ``limit`` jobs, newest first."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.bulk_jobs.recent(limit)

    def stop(self, job_id: int, *, by: str) -> bool:
        """Stop the job: no chunk commits after this one; whether it was still going."""
        with self.context.storage.transaction() as uow:
            return uow.bulk_jobs.stop(job_id, by=by, at=self.context.clock())

    def work(self, now: datetime | None = None, *, seconds: float = SLICE_SECONDS) -> int:
        """The periodic task: claim the oldest job waiting and work through it, a chunk per
        transaction, until about ``seconds`` have passed (at least one chunk), then the next
        job while time is left; how many subscribers were done. ``now`` is the runner's clock
        (unused: every chunk reads the service's own)."""
        del now
        return work_in_slice(self.context, _bulk_jobs, self._work_on, seconds)

    def _work_on(self, job: BulkJobRecord, lease: str, deadline: float) -> int:
        done = 0
        position = job.position
        while True:
            try:
                progress = self._chunk(job, position, lease)
            except LeaseLost:
                return done
            done += progress.changed + progress.unchanged + progress.missing
            position = progress.position
            if progress.finished or time.monotonic() >= deadline:
                return done

    def _chunk(
        self, job: BulkJobRecord, position: tuple[datetime, int], lease: str
    ) -> BulkJobProgress:
        query = SubscriberQuery(job.filter, "signup", True, position, limit=CHUNK, budget=BUDGET)
        with self.context.storage.transaction() as uow:
            scan = uow.subscribers.scan(query)
            found: Counter[BulkResult] = Counter(
                self.bulk.act_in(uow, job.act, record.email) for record in scan.items
            )
            ahead = scan.resume_after(CHUNK, "signup")
            progress = BulkJobProgress(
                position=_signup_position(ahead, position),
                changed=found["changed"],
                unchanged=found["unchanged"],
                missing=found["missing"],
                finished=ahead is None,
            )
            now = self.context.clock()
            if not uow.bulk_jobs.advance(job.id, progress, lease=lease, now=now, until=now + LEASE):
                raise LeaseLost()
        return progress


def _bulk_jobs(uow: SqlUnitOfWork) -> SqlBulkJobs:
    return uow.bulk_jobs


def _signup_position(
    ahead: tuple[datetime, int] | tuple[str] | None, current: tuple[datetime, int]
) -> tuple[datetime, int]:
    """Where a walk in signup order goes on: ``ahead``, or ``current`` when it has ended."""
    if ahead is None:
        return current
    at, ident = ahead[0], ahead[-1]
    assert isinstance(at, datetime) and isinstance(ident, int)
    return (at, ident)
