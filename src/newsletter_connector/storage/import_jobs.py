"""Imports uploaded in the admin area (``service.import_jobs``), worked through by the sync runner
as bulk acts are (:mod:`.bulk_jobs`): a job row leased by one runner at a time, advanced a chunk
per transaction by the line it stopped at. Always the built-in tables.

An upload is decoded once, as it arrives, and its text kept in UTF-8 (whatever encoding it came
in: erasure finds an address in it in any letter case), in parts beside its job until the
import ends, is stopped or is discarded; then the file is forgotten (it holds people's
addresses) and only the counts and the refused lines' numbers and reasons stay.

A job goes through these phases: ``uploaded`` (waiting for the editor's choices), ``checking``
(the dry run, worked by the runner), ``checked`` (waiting for the go), ``importing`` (worked by
the runner), and ends ``imported``, ``stopped`` or ``discarded``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

#: Phases the runner works on.
WORKED_PHASES = ("checking", "importing")
#: Phases in which the file is kept.
FILE_KEPT_PHASES = ("uploaded", "checking", "checked", "importing")
#: Refused lines a job keeps (their number, field and reason), the first ones in line order.
KEPT_REFUSALS = 100


@dataclass(frozen=True)
class ImportJobRecord:
    """An uploaded import and how far it got. ``options`` are the editor's choices (mode,
    consent, columns, encoding, delimiter: :class:`~..service.subscriber_import.ImportOptions`
    as JSON values); ``lines`` the file's line count; ``position`` the last line done in the
    current phase, ``counts`` its outcomes by action (a line refused with others counts
    once each) and ``refusals`` its first :data:`KEPT_REFUSALS` refused lines (``{"line",
    "through", "field", "reason"}``; ``through`` is the last of lines refused together, else
    ``None``). ``checked_counts`` keeps the dry run's counts once the import starts.
    ``encoding`` is the one the file arrived in (a name of
    :data:`~..service.import_files.ENCODING_WORDS`); its parts hold its text in UTF-8."""

    id: int
    file_name: str
    size: int
    lines: int
    phase: str
    options: dict[str, Any]
    requested_by: str
    requested_at: datetime
    position: int
    counts: dict[str, int]
    refusals: list[dict[str, Any]]
    checked_counts: dict[str, int]
    started_by: str | None
    started_at: datetime | None
    finished_at: datetime | None
    stopped_by: str | None
    encoding: str = "utf-8"

    @property
    def worked(self) -> bool:
        """Whether the runner works on it now (a dry run or the import)."""
        return self.phase in WORKED_PHASES

    @property
    def done(self) -> int:
        """Lines done in the current phase."""
        return sum(self.counts.values())


@dataclass(frozen=True)
class ImportJobProgress:
    """One chunk's outcome: the job's new position, its counts and kept refusals as they now
    stand (not added: only the lease holder writes them), and whether the file has ended."""

    position: int
    counts: dict[str, int]
    refusals: list[dict[str, Any]]
    finished: bool


class ImportJobRepository(Protocol):
    """Import jobs by id (ids grow with each upload), and their files' parts."""

    def add(
        self, *, file_name: str, size: int, lines: int, requested_by: str, requested_at: datetime
    ) -> int:
        """Store a new job in phase ``uploaded``; its id (add its parts in the same unit of
        work)."""

    def set_size(self, job_id: int, *, size: int, lines: int, encoding: str = "utf-8") -> None:
        """Record the size, line count and arrival encoding of the job's file, once its parts
        are stored."""

    def add_part(self, job_id: int, seq: int, data: bytes) -> None:
        """Store part ``seq`` (from 0) of the job's file (UTF-8 text)."""

    def replace_part(self, job_id: int, seq: int, data: bytes) -> None:
        """Put ``data`` in place of part ``seq`` of the job's file."""

    def part(self, job_id: int, seq: int) -> bytes | None:
        """Part ``seq`` of the job's file, or ``None`` past its end (or once forgotten)."""

    def get(self, job_id: int) -> ImportJobRecord | None:
        """The job, or ``None``."""

    def recent(self, limit: int) -> list[ImportJobRecord]:
        """The newest ``limit`` jobs, newest first."""

    def choose(self, job_id: int, options: dict[str, Any], *, at: datetime) -> bool:
        """Set the job's options and start its dry run (phase ``checking``, from the start of
        the file) unless it is being worked on or has ended; whether it was."""

    def start(self, job_id: int, *, by: str, at: datetime) -> bool:
        """Start the import of a ``checked`` job (phase ``importing``, from the start of the
        file, the dry run's counts kept as ``checked_counts``); whether it was checked."""

    def claim(self, *, lease: str, now: datetime, until: datetime) -> ImportJobRecord | None:
        """The oldest job in a worked phase whose lease has ended (or that never had one),
        leased under ``lease`` until ``until``; ``None`` when there is none. Of racing claims,
        one gets each job."""

    def advance(
        self,
        job_id: int,
        progress: ImportJobProgress,
        *,
        lease: str,
        now: datetime,
        until: datetime,
    ) -> bool:
        """Record ``progress`` of the job held under ``lease`` and extend the lease to
        ``until``; a finished dry run becomes ``checked``, a finished import ``imported`` (its
        file forgotten). False, changing nothing, when the lease is another's or the job left
        its phase. Called last in the chunk's transaction: false means the chunk rolls back."""

    def release(self, job_id: int, *, lease: str) -> None:
        """End the lease ``lease`` on the job now; nothing when it is another's."""

    def stop(self, job_id: int, *, by: str, at: datetime) -> bool:
        """End a job that has not ended (phase ``stopped``, or ``discarded`` when it was not
        being worked on), its file forgotten; whether it had not ended."""

    def discard_holding(self, needle: bytes, *, by: str, at: datetime) -> int:
        """End every job whose file is kept and holds ``needle`` (an address's UTF-8 bytes) in
        any letter case, whatever encoding the file arrived in, as :meth:`stop` does: an
        erased address must not stay in an upload, nor come back with its import. How many
        were ended."""
