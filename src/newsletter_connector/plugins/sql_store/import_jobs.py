"""``SqlImportJobs``: imports on ``nc_import_jobs`` and ``nc_import_file_parts``, its leases those
of :mod:`.leases`."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update

from ...storage.import_jobs import (
    FILE_KEPT_PHASES,
    WORKED_PHASES,
    ImportJobProgress,
    ImportJobRecord,
)
from . import leases
from .jobs import JobTable
from .record_builders import inserted_id
from .repository import SqlRepository
from .tables import import_file_parts, import_jobs

_c = import_jobs.c
_WORKED = _c.phase.in_(WORKED_PHASES)
#: The phase a worked phase ends in.
_FINISHED_AS = {"checking": "checked", "importing": "imported"}


def _record(row: Mapping[Any, Any]) -> ImportJobRecord:
    values = dict(row)
    del values["lease"], values["lease_until"]
    return ImportJobRecord(**values)


#: The imports' rows for :class:`~.jobs.SqlJobs`: those in a worked phase wait for a runner.
IMPORT_JOBS = JobTable(import_jobs, _WORKED, _record)


class SqlImportJobs(SqlRepository):
    """Import jobs by id (ids grow with each upload), and their files' parts."""

    def add(
        self, *, file_name: str, size: int, lines: int, requested_by: str, requested_at: datetime
    ) -> int:
        """Store a new job in phase ``uploaded``; its id (add its parts in the same unit of
        work)."""
        statement = insert(import_jobs).values(
            file_name=file_name,
            size=size,
            lines=lines,
            phase="uploaded",
            options={},
            requested_by=requested_by,
            requested_at=requested_at,
            position=0,
            counts={},
            refusals=[],
            checked_counts={},
        )
        return inserted_id(self.connection, statement)

    def set_size(self, job_id: int, *, size: int, lines: int, encoding: str = "utf-8") -> None:
        """Record the size, line count and arrival encoding of the job's file, once its parts
        are stored."""
        self.connection.execute(
            update(import_jobs)
            .where(_c.id == job_id)
            .values(size=size, lines=lines, encoding=encoding)
        )

    def add_part(self, job_id: int, seq: int, data: bytes) -> None:
        """Store part ``seq`` (from 0) of the job's file (UTF-8 text)."""
        self.connection.execute(insert(import_file_parts).values(job_id=job_id, seq=seq, data=data))

    def replace_part(self, job_id: int, seq: int, data: bytes) -> None:
        """Put ``data`` in place of part ``seq`` of the job's file."""
        self.connection.execute(
            update(import_file_parts)
            .where(import_file_parts.c.job_id == job_id, import_file_parts.c.seq == seq)
            .values(data=data)
        )

    def part(self, job_id: int, seq: int) -> bytes | None:
        """Part ``seq`` of the job's file, or ``None`` past its end (or once forgotten)."""
        data = self.connection.scalar(
            select(import_file_parts.c.data).where(
                import_file_parts.c.job_id == job_id, import_file_parts.c.seq == seq
            )
        )
        return None if data is None else bytes(data)

    def get(self, job_id: int) -> ImportJobRecord | None:
        """The job, or ``None``."""
        found = self.connection.execute(select(import_jobs).where(_c.id == job_id)).mappings()
        row = found.first()
        return None if row is None else _record(row)

    def recent(self, limit: int) -> list[ImportJobRecord]:
        """The newest ``limit`` jobs, newest first."""
        rows = self.connection.execute(select(import_jobs).order_by(_c.id.desc()).limit(limit))
        return [_record(row) for row in rows.mappings()]

    def choose(self, job_id: int, options: dict[str, Any], *, at: datetime) -> bool:
        """Set the job's options and start its dry run (phase ``checking``, from the start of
        the file) unless it is being worked on or has ended; whether it was."""
        result = self.connection.execute(
            update(import_jobs)
            .where(_c.id == job_id, _c.phase.in_(("uploaded", "checked")))
            .values(
                options=options,
                phase="checking",
                position=0,
                counts={},
                refusals=[],
                started_at=None,
                finished_at=None,
            )
        )
        return bool(result.rowcount)

    def start(self, job_id: int, *, by: str, at: datetime) -> bool:
        """Start the import of a ``checked`` job (phase ``importing``, from the start of the
        file, the dry run's counts kept as ``checked_counts``); whether it was checked."""
        # In this order: MySQL and MariaDB give each assignment the values of those before it.
        result = self.connection.execute(
            update(import_jobs)
            .where(_c.id == job_id, _c.phase == "checked")
            .ordered_values(
                (_c.checked_counts, _c.counts),
                (_c.phase, "importing"),
                (_c.position, 0),
                (_c.counts, {}),
                (_c.refusals, []),
                (_c.started_by, by),
                (_c.started_at, None),
                (_c.finished_at, None),
            )
        )
        return bool(result.rowcount)

    def claim(self, *, lease: str, now: datetime, until: datetime) -> ImportJobRecord | None:
        """The oldest job in a worked phase whose lease has ended (or that never had one),
        leased under ``lease`` until ``until``; ``None`` when there is none. Of racing claims,
        one gets each job."""
        taken = leases.claim(
            self.connection, import_jobs, _WORKED, lease=lease, now=now, until=until
        )
        return None if taken is None else _record(taken)

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
        phase = self.connection.scalar(select(_c.phase).where(_c.id == job_id))
        values: dict[str, Any] = {
            "position": progress.position,
            "counts": progress.counts,
            "refusals": progress.refusals,
        }
        if progress.finished and phase in _FINISHED_AS:
            values.update(phase=_FINISHED_AS[phase], finished_at=now)
        held = _c.phase == phase
        if not leases.advance(
            self.connection, import_jobs, job_id, held, lease=lease, until=until, values=values
        ):
            return False
        if values.get("phase") == "imported":
            self._forget_file(job_id)
        return True

    def release(self, job_id: int, *, lease: str) -> None:
        """End the lease ``lease`` on the job now; nothing when it is another's."""
        leases.release(self.connection, import_jobs, job_id, lease=lease)

    def stop(self, job_id: int, *, by: str, at: datetime) -> bool:
        """End a job that has not ended (phase ``stopped``, or ``discarded`` when it was not
        being worked on), its file forgotten; whether it had not ended."""
        ended = False
        for phases, phase in ((WORKED_PHASES, "stopped"), (FILE_KEPT_PHASES, "discarded")):
            result = self.connection.execute(
                update(import_jobs)
                .where(_c.id == job_id, _c.phase.in_(phases))
                .values(phase=phase, finished_at=at, stopped_by=by)
            )
            ended = ended or bool(result.rowcount)
        if ended:
            self._forget_file(job_id)
        return ended

    def discard_holding(self, needle: bytes, *, by: str, at: datetime) -> int:
        """End every job whose file is kept and holds ``needle`` (an address's UTF-8 bytes) in
        any letter case, whatever encoding the file arrived in, as :meth:`stop` does: an
        erased address must not stay in an upload, nor come back with its import. How many
        were ended."""
        kept = self.connection.scalars(
            select(_c.id).where(_c.phase.in_(FILE_KEPT_PHASES)).order_by(_c.id)
        ).all()
        address = needle.decode("utf-8", errors="replace").lower()
        ended = 0
        for job_id in kept:
            if self._holds(job_id, address) and self.stop(job_id, by=by, at=at):
                ended += 1
        return ended

    def _holds(self, job_id: int, address: str) -> bool:
        """Whether the job's text holds ``address`` (lowercase) in any letter case, read a
        part at a time, each searched with the end of the one before (a match may straddle
        two parts, a character too)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        tail = ""
        seq = 0
        while (data := self.part(job_id, seq)) is not None:
            window = tail + decoder.decode(data).lower()
            if address in window:
                return True
            tail = window[-(len(address) - 1) :] if len(address) > 1 else ""
            seq += 1
        return False

    def _forget_file(self, job_id: int) -> None:
        self.connection.execute(
            delete(import_file_parts).where(import_file_parts.c.job_id == job_id)
        )
