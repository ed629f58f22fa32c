"""The sync runner's slice of work on leased jobs, shared by the acts on all matching
(:mod:`.subscriber_jobs`) and the imports (:mod:`.importing`): claim the oldest job waiting
under a new lease, work through it until the slice's time is up, end the lease, and take the
next while time is left.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from ..plugins.sql_store.store import SqlUnitOfWork
from .context import ServiceContext

#: How long a claimed job stays a runner's without a chunk committed.
LEASE = timedelta(seconds=60)
#: Seconds one slice spends on jobs before the runner goes on delivering.
SLICE_SECONDS = 20.0


class LeasedJob(Protocol):
    @property
    def id(self) -> int: ...


Job = TypeVar("Job", bound=LeasedJob)
Claimed = TypeVar("Claimed", bound=LeasedJob, covariant=True)


class LeasedJobs(Protocol[Claimed]):
    """What a job repository offers the slice: a claim under a lease, and its end."""

    def claim(self, *, lease: str, now: datetime, until: datetime) -> Claimed | None: ...

    def release(self, job_id: int, *, lease: str) -> None: ...


def work_in_slice(
    context: ServiceContext,
    jobs_of: Callable[[SqlUnitOfWork], LeasedJobs[Job]],
    work_on: Callable[[Job, str, float], int],
    seconds: float,
) -> int:
    """Work through the jobs of ``jobs_of`` for about ``seconds``: each claimed under a new
    lease, handed to ``work_on(job, lease, deadline)`` (at least one chunk: it returns how much
    it did), its lease ended afterwards even when ``work_on`` raises. What was done, summed."""
    deadline = time.monotonic() + seconds
    done = 0
    while True:
        lease = secrets.token_hex(16)
        clock = context.clock()
        with context.storage.transaction() as uow:
            job = jobs_of(uow).claim(lease=lease, now=clock, until=clock + LEASE)
        if job is None:
            return done
        try:
            done += work_on(job, lease, deadline)
        finally:
            with context.storage.transaction() as uow:
                jobs_of(uow).release(job.id, lease=lease)
        if time.monotonic() >= deadline:
            return done
