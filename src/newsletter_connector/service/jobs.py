"""Long work as durable jobs of registered kinds (docs/contributing/decisions/admin.md, "One job
mechanism"), worked by the sync runner in one loop (:meth:`JobService.work`, a periodic task).

A kind (:class:`JobKind`) is a name, the words a page or log gives one of its jobs, where its
rows lie (a :class:`~..plugins.sql_store.jobs.JobTable`), its step function, its stop and its
progress in the one shape of a job's page (:class:`JobProgress`). The
loop claims the job asked for first among the waiting jobs of every kind, under a new lease,
and runs the kind's steps: each step commits its work with the job's new position and counts
in one transaction under that lease, and raises :class:`LeaseLost` (rolling the step back) when
the lease went to another runner or the job was stopped. So a runner killed mid-step leaves the
step for the next lease holder, and no step is applied twice. A new kind of long work registers
a step function; the lease, the claim and the loop are this module's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..errors import NotFound
from ..plugins.sql_store.jobs import JobTable
from ..plugins.sql_store.leases import LEASE_COLUMNS
from .context import ServiceContext

#: How long a claimed job stays a runner's without a step committed.
LEASE = timedelta(seconds=60)
#: Seconds one slice spends on jobs before the runner goes on delivering.
SLICE_SECONDS = 20.0

#: A kind's steps on a claimed job: ``steps(job, lease)`` runs one committed step per item it
#: yields (how much that step did), and ends when the job has ended.
Steps = Callable[[Any, str], Iterable[int]]
#: A kind's stop: ``stop(uow, job_id, by=..., at=...)``, whether the job had not ended.
Stop = Callable[..., bool]


@dataclass(frozen=True)
class JobProgress:
    """How far a job got, in the one shape every job's page shows (the admin template
    ``job_progress.html``): the bar's ``label``, how much was ``done``, how far along its
    yardstick it has ``reached`` of ``total`` (the lines of a file, the matches counted when
    the act was asked for), and whether the page says the total (``total_shown``: a count
    kept from the list may be an estimate)."""

    label: str
    done: int
    reached: int
    total: int
    total_shown: bool

    @property
    def percent(self) -> int:
        """How far along, in whole percent (100 for a job with nothing to do)."""
        return min(100, round(100 * self.reached / self.total)) if self.total else 100


class LeaseLost(Exception):
    """The job's lease is another runner's, or the job was stopped: the step rolls back."""


def held(advanced: bool) -> None:
    """End a step whose job's advance under its lease changed nothing (``advanced`` false):
    :class:`LeaseLost`, raised inside the step's transaction, rolls the step back."""
    if not advanced:
        raise LeaseLost()


@dataclass(frozen=True)
class JobKind:
    """One kind of long work: ``name`` (its key in the registry), ``words`` (what a page or log
    calls one of its jobs), ``rows`` (where its jobs lie and which wait for a runner),
    ``steps`` (see :data:`Steps`), ``stop`` (see :data:`Stop`) and ``progress`` (a job of the
    kind as a :class:`JobProgress`)."""

    name: str
    words: str
    rows: JobTable
    steps: Steps
    stop: Stop
    progress: Callable[[Any], JobProgress]


class JobService:
    """``service.jobs``: the registry of job kinds and the runner's one loop over them."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context
        self.kinds: dict[str, JobKind] = {}

    def register(self, kind: JobKind) -> None:
        """Add ``kind``; :class:`ValueError` when a kind of that name is registered, or its
        table lacks a lease column (:data:`~..plugins.sql_store.leases.LEASE_COLUMNS`)."""
        if kind.name in self.kinds:
            raise ValueError(f"a job kind named {kind.name!r} is registered")
        lacking = LEASE_COLUMNS - set(kind.rows.table.c.keys())
        if lacking:
            missing = ", ".join(sorted(lacking))
            raise ValueError(f"the rows of job kind {kind.name!r} lack {missing}")
        self.kinds[kind.name] = kind

    def stop(self, kind: str, job_id: int, *, by: str) -> bool:
        """Stop the job of ``kind``: no step commits after this; whether it had not ended.
        :class:`NotFound` when no such kind is registered."""
        if kind not in self.kinds:
            raise NotFound(f"no kind of job named {kind!r}")
        with self.context.storage.transaction() as uow:
            return bool(self.kinds[kind].stop(uow, job_id, by=by, at=self.context.clock()))

    def work(
        self,
        now: datetime | None = None,
        *,
        seconds: float = SLICE_SECONDS,
        kinds: Sequence[str] | None = None,
    ) -> int:
        """The periodic task: claim the job asked for first among those waiting of every kind
        (or of ``kinds``) under a new lease, run its kind's steps until it ends, its lease is
        lost or about ``seconds`` have passed (at least one step), end the lease, and take the
        next while time is left; how much was done, summed over the steps. ``now`` is the
        runner's clock (unused: every step reads the service's own)."""
        del now
        chosen = {name: self.kinds[name] for name in (kinds or self.kinds)}
        rows = {name: kind.rows for name, kind in chosen.items()}
        deadline = time.monotonic() + seconds
        done = 0
        while True:
            lease = secrets.token_hex(16)
            clock = self.context.clock()
            with self.context.storage.transaction() as uow:
                claimed = uow.job_leases.claim(rows, lease=lease, now=clock, until=clock + LEASE)
            if claimed is None:
                return done
            try:
                done += self._run(chosen[claimed.kind], claimed.record, lease, deadline)
            finally:
                with self.context.storage.transaction() as uow:
                    uow.job_leases.release(rows[claimed.kind], claimed.id, lease=lease)
            if time.monotonic() >= deadline:
                return done

    @staticmethod
    def _run(kind: JobKind, job: Any, lease: str, deadline: float) -> int:
        done = 0
        steps = iter(kind.steps(job, lease))
        try:
            for step in steps:
                done += step
                if time.monotonic() >= deadline:
                    break
        except LeaseLost:
            pass
        finally:
            close = getattr(steps, "close", None)
            if close is not None:
                close()
        return done
