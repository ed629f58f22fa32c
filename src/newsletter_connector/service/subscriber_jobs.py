"""Acts on every subscriber matching a filter (the admin list's "all N matching"), as jobs of
the kind ``bulk`` (:mod:`.jobs`), worked through in the sync runner's one job loop.

A job walks the matching subscribers newest first from the moment it was asked for, in chunks
of :data:`CHUNK`. Each chunk does to every subscriber what the single act does
(:meth:`SubscriberBulkService.act_in`, queueing the same events) and records the job's new
position and counts in the same transaction, under the job's lease: a runner that was killed
leaves its chunk undone, and one whose lease went to another runner (or whose job was
stopped) cannot commit its chunk, so no act is applied twice and every count is exact."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from ..errors import InvalidRequest, NotFound
from ..plugins.sql_store.bulk_jobs import BULK_JOBS
from ..storage.bulk_jobs import BulkJobProgress, BulkJobRecord, NewBulkJob
from ..storage.subscriber_query import SubscriberFilter, SubscriberQuery
from .jobs import LEASE, SLICE_SECONDS, JobKind, JobProgress, JobService, held
from .subscriber_bulk import BULK_ACTS, BulkResult, SubscriberBulkService
from .subscriber_list import BUDGET

#: Subscribers acted on per transaction (bench: admin_bulk_job).
CHUNK = 100
#: The kind's name in the job registry.
KIND = "bulk"


class SubscriberJobService:
    """``service.subscriber_jobs``."""

    def __init__(self, bulk: SubscriberBulkService, jobs: JobService) -> None:
        self.bulk = bulk
        self.context = bulk.subscribers.context
        self.jobs = jobs
        jobs.register(
            JobKind(
                KIND,
                words="bulk act",
                rows=BULK_JOBS,
                steps=self._steps,
                stop=lambda uow, job_id, *, by, at: uow.bulk_jobs.stop(job_id, by=by, at=at),
                progress=progress,
            )
        )

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
        return self.jobs.stop(KIND, job_id, by=by)

    def work(self, now: datetime | None = None, *, seconds: float = SLICE_SECONDS) -> int:
        """The job loop (:meth:`.jobs.JobService.work`) on bulk acts alone; how many
        subscribers were done."""
        return self.jobs.work(now, seconds=seconds, kinds=(KIND,))

    def _steps(self, job: BulkJobRecord, lease: str) -> Iterator[int]:
        """The kind's step function: a chunk per step, until the walk ends."""
        position = job.position
        while True:
            progress = self._chunk(job, position, lease)
            yield progress.changed + progress.unchanged + progress.missing
            position = progress.position
            if progress.finished:
                return

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
            held(uow.bulk_jobs.advance(job.id, progress, lease=lease, now=now, until=now + LEASE))
        return progress


def progress(job: BulkJobRecord) -> JobProgress:
    """How far ``job`` got: the subscribers done, of the number matching when it was asked for
    (not said: it may be an estimate)."""
    return JobProgress("Done so far", job.done, job.done, job.expected, total_shown=False)


def _signup_position(
    ahead: tuple[datetime, int] | tuple[str] | None, current: tuple[datetime, int]
) -> tuple[datetime, int]:
    """Where a walk in signup order goes on: ``ahead``, or ``current`` when it has ended."""
    if ahead is None:
        return current
    at, ident = ahead[0], ahead[-1]
    assert isinstance(at, datetime) and isinstance(ident, int)
    return (at, ident)
