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
from typing import Any

#: Phases the runner works on.
WORKED_PHASES = ("checking", "importing")
#: Phases in which the file is kept.
FILE_KEPT_PHASES = ("uploaded", "checking", "checked", "importing")
#: Refused lines a job keeps (their number, field and reason), the first ones in line order.
KEPT_REFUSALS = 100


@dataclass(frozen=True)
class ImportJobRecord:
    """An uploaded import and how far it got. ``options`` are the editor's choices (mode,
    consent, columns, encoding, delimiter: :class:`~..service.importing.ImportOptions`
    as JSON values); ``lines`` the file's line count; ``position`` the last line done in the
    current phase, ``counts`` its outcomes by action (a line refused with others counts
    once each) and ``refusals`` its first :data:`KEPT_REFUSALS` refused lines (``{"line",
    "through", "field", "reason"}``; ``through`` is the last of lines refused together, else
    ``None``). ``checked_counts`` keeps the dry run's counts once the import starts.
    ``encoding`` is the one the file arrived in (a name of
    :data:`~..service.importing.ENCODING_WORDS`); its parts hold its text in UTF-8."""

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
