"""Imports uploaded in the admin area (docs/admin.md, "How do I import a list?"): the upload is
stored in the database, the editor chooses how to read it, the sync runner checks it (a dry run)
and, once the owner says go, imports it: jobs of the kind ``import`` (:mod:`..jobs`), worked in
the runner's one job loop beside the bulk acts.

Every chunk of lines commits with the job's new position and counts under the job's lease, so a
runner killed mid-chunk leaves the chunk for the next one, and a runner that lost its lease
commits nothing. The lines themselves are applied by :class:`~._importer.
SubscriberImportService`, exactly as the command line applies them.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from typing import Any, BinaryIO

from ...errors import InvalidRequest, NotFound
from ...plugins.sql_store.import_jobs import IMPORT_JOBS
from ...storage.import_jobs import (
    KEPT_REFUSALS,
    ImportJobProgress,
    ImportJobRecord,
)
from ..jobs import LEASE, SLICE_SECONDS, JobKind, JobProgress, JobService, held
from ._files import ImportSource
from ._importer import ImportOptions, ImportPlan, LineOutcome, SubscriberImportService
from ._text import ArrivingText, given_back, latin1_as_utf8

#: Bytes per stored part of an upload.
PART_BYTES = 1 << 20
#: The kind's name in the job registry.
KIND = "import"


class StoredFile(io.RawIOBase):
    """An upload read back from its stored parts, one short read transaction per part."""

    def __init__(self, service: ImportJobService, job_id: int) -> None:
        self._service = service
        self._job_id = job_id
        self._seq = 0
        self._buffer = b""

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        if not self._buffer:
            self._buffer = self._service.part(self._job_id, self._seq) or b""
            self._seq += 1
        count = min(len(target), len(self._buffer))
        target[:count] = self._buffer[:count]
        self._buffer = self._buffer[count:]
        return count


class ImportJobService:
    """``service.import_jobs``."""

    def __init__(self, importer: SubscriberImportService, jobs: JobService) -> None:
        self.importer = importer
        self.context = importer.context
        self.jobs = jobs
        jobs.register(
            JobKind(
                KIND,
                words="import",
                rows=IMPORT_JOBS,
                steps=self._steps,
                stop=lambda uow, job_id, *, by, at: uow.import_jobs.stop(job_id, by=by, at=at),
                progress=progress,
            )
        )

    # -- the editor's steps ----------------------------------------------------------------------

    def upload(self, stream: BinaryIO, *, file_name: str, requested_by: str) -> ImportJobRecord:
        """Store an uploaded file as a new job waiting for the editor's choices: decoded as it
        arrives (:class:`~._text.ArrivingText`) and kept as UTF-8 text, with the encoding
        it came in.

        :raises InvalidRequest: naming ``file`` when it is empty, larger than
            ``import_max_bytes`` or UTF-16 that does not decode (nothing is stored).
        """
        limit = self.context.settings.import_max_bytes
        size = seq = 0
        arriving = ArrivingText()
        with self.context.storage.transaction() as uow:
            job_id = uow.import_jobs.add(
                file_name=file_name.strip()[:200] or "upload",
                size=0,
                lines=0,
                requested_by=requested_by,
                requested_at=self.context.clock(),
            )
            while block := stream.read(PART_BYTES):
                size += len(block)
                if size > limit:
                    raise InvalidRequest(
                        f"the file is larger than the limit of {limit:,} bytes "
                        "(setting import_max_bytes); nothing was stored",
                        field="file",
                    )
                uow.import_jobs.add_part(job_id, seq, arriving.part(block))
                seq += 1
            if size == 0:
                raise InvalidRequest("the file is empty; nothing was stored", field="file")
            if arriving.finish():
                for stored in range(seq):
                    data = uow.import_jobs.part(job_id, stored) or b""
                    uow.import_jobs.replace_part(job_id, stored, latin1_as_utf8(data))
            uow.import_jobs.set_size(
                job_id, size=size, lines=arriving.lines, encoding=arriving.encoding
            )
        return self.get(job_id)

    def plan(self, job: ImportJobRecord, options: ImportOptions | None = None) -> ImportPlan:
        """The job's file read with ``options`` (its stored ones when ``None``).

        :raises InvalidRequest: naming the option at fault (see
            :meth:`~._importer.SubscriberImportService.plan`).
        """
        chosen = options or ImportOptions.from_json(job.options)
        return self.importer.plan(self.source(job), chosen)

    def source(self, job: ImportJobRecord) -> ImportSource:
        """The job's stored file, in the bytes of the encoding it arrived in."""
        return ImportSource(
            job.file_name,
            lambda: given_back(io.BufferedReader(StoredFile(self, job.id)), job.encoding),
        )

    def head(self, job: ImportJobRecord) -> bytes:
        """The first part of the job's file (about a MiB) as :meth:`source` gives it: what
        the choices form reads the first line from."""
        with self.source(job).open() as stream:
            return stream.read(PART_BYTES)

    def part(self, job_id: int, seq: int) -> bytes | None:
        """Part ``seq`` of the job's file (``None`` past its end)."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.import_jobs.part(job_id, seq)

    def choose(self, job_id: int, options: ImportOptions) -> ImportJobRecord:
        """Read the job's file with ``options`` and queue its dry run.

        :raises InvalidRequest: naming the option at fault, or ``job`` when the job is being
            worked on or has ended.
        :raises NotFound: no such job.
        """
        job = self.get(job_id)
        self.plan(job, options)
        with self.context.storage.transaction() as uow:
            chosen = uow.import_jobs.choose(job_id, options.as_json(), at=self.context.clock())
        if not chosen:
            raise InvalidRequest("this import is being worked on or has ended", field="job")
        return self.get(job_id)

    def start(self, job_id: int, *, by: str, mails_confirmed: bool) -> ImportJobRecord:
        """Start importing a checked job. When its dry run found lines to add as pending,
        ``mails_confirmed`` must say the editor accepts the confirmation mails they cause.

        :raises InvalidRequest: naming ``confirm_mails`` when not confirmed, or ``job`` when
            the job is not waiting for the go.
        :raises NotFound: no such job.
        """
        job = self.get(job_id)
        if job.phase != "checked":
            raise InvalidRequest("this import is not waiting to start", field="job")
        if job.counts.get("added_pending", 0) and not mails_confirmed:
            raise InvalidRequest(
                "say that the platform may mail each pending reader a confirmation",
                field="confirm_mails",
            )
        with self.context.storage.transaction() as uow:
            started = uow.import_jobs.start(job_id, by=by, at=self.context.clock())
        if not started:
            raise InvalidRequest("this import is not waiting to start", field="job")
        return self.get(job_id)

    def stop(self, job_id: int, *, by: str) -> bool:
        """Stop or discard the job; its file is forgotten. Whether it had not ended."""
        return self.jobs.stop(KIND, job_id, by=by)

    def get(self, job_id: int) -> ImportJobRecord:
        """The job; :class:`NotFound` when there is none."""
        with self.context.storage.transaction(write=False) as uow:
            job = uow.import_jobs.get(job_id)
        if job is None:
            raise NotFound("no such import")
        return job

    def recent(self, limit: int = 10) -> list[ImportJobRecord]:
        """The newest ``limit`` jobs, newest first."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.import_jobs.recent(limit)

    # -- the runner's part -----------------------------------------------------------------------

    def work(self, now: datetime | None = None, *, seconds: float = SLICE_SECONDS) -> int:
        """The job loop (:meth:`.jobs.JobService.work`) on imports alone; how many lines were
        done."""
        return self.jobs.work(now, seconds=seconds, kinds=(KIND,))

    def _steps(self, job: ImportJobRecord, lease: str) -> Iterator[int]:
        """The kind's step function: a chunk of lines per step, then the phase's end."""
        try:
            plan = self.plan(job)
        except InvalidRequest as problem:  # the options no longer read the file: end it
            self._finish_unreadable(job, lease, problem)
            return
        dry_run = job.phase == "checking"
        counts: Counter[str] = Counter(job.counts)
        refusals = list(job.refusals)
        # Not read ahead (ReadAhead) while a chunk is stored: reading the upload's stored parts
        # takes a transaction of its own, which must not wait beside the chunk's.
        chunks = self.importer.chunks(plan, self.importer.reader(plan), job.position)
        for chunk in chunks:
            with self.context.storage.transaction() as uow:
                outcomes = self.importer.apply_chunk(uow, chunk, plan.options, dry_run=dry_run)
                chunk_counts = counts + _counted(outcomes)
                kept = _kept_refusals(refusals, outcomes)
                progress = ImportJobProgress(chunk.last_line, dict(chunk_counts), kept, False)
                now = self.context.clock()
                held(
                    uow.import_jobs.advance(
                        job.id, progress, lease=lease, now=now, until=now + LEASE
                    )
                )
            counts, refusals = chunk_counts, kept
            yield len(outcomes)
        self._finish(job, lease, counts, refusals)

    def _finish(
        self, job: ImportJobRecord, lease: str, counts: Counter[str], refusals: list[Any]
    ) -> None:
        with self.context.storage.transaction() as uow:
            now = self.context.clock()
            position = max(job.position, job.lines)
            progress = ImportJobProgress(position, dict(counts), refusals, True)
            uow.import_jobs.advance(job.id, progress, lease=lease, now=now, until=now)

    def _finish_unreadable(self, job: ImportJobRecord, lease: str, problem: InvalidRequest) -> None:
        """End a job its options no longer read (a lowered size limit): its one refusal, on
        line 0, says why."""
        refusal = {"line": 0, "field": problem.field, "reason": problem.message}
        self._finish(job, lease, Counter(), [refusal])


def progress(job: ImportJobRecord) -> JobProgress:
    """How far ``job`` got in its phase: the lines done, and the line reached of the file's."""
    return JobProgress("Lines done", job.done, job.position, job.lines, total_shown=True)


def _counted(outcomes: list[LineOutcome]) -> Counter[str]:
    """How many lines of the file each action covers (lines refused together each count)."""
    counts: Counter[str] = Counter()
    for outcome in outcomes:
        counts[outcome.action] += outcome.lines
    return counts


def _kept_refusals(kept: list[Any], outcomes: list[LineOutcome]) -> list[dict[str, Any]]:
    """``kept`` with the chunk's refused lines added, up to :data:`KEPT_REFUSALS`."""
    room = KEPT_REFUSALS - len(kept)
    added = [
        {"line": o.line, "through": o.through, "field": o.field, "reason": o.reason}
        for o in outcomes
        if o.action == "refused"
    ][: max(room, 0)]
    return [*kept, *added]
