"""The SQL store's newsletter issues (``nc_issues``).

"Newest first" is ``id DESC``; creation order walks the ``(created_at, id)`` index by
``OFFSET`` (list-source pages are numbered; the table grows by about a row a day). The unique
``period_key`` records a scheduled run once per period: a racing second insert fails inside a
savepoint and the caller is told nothing was stored.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from sqlalchemy import Select, func, insert, select
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError

from ...storage.records import IssueRecord, NewIssue
from .record_builders import inserted_id, record_of
from .repository import SqlRepository
from .tables import issues

_WITHOUT_BODIES = [c for c in issues.c if c.name not in ("html", "text")]


def _record(row: RowMapping, *, bodies: bool = True) -> IssueRecord:
    return record_of(IssueRecord, row if bodies else {**row, "html": None, "text": None})


class SqlIssues(SqlRepository):
    """Recorded newsletter issues, in recording order (ids increase)."""

    def add(self, issue: NewIssue) -> IssueRecord | None:
        """Record ``issue``; ``None``, storing nothing, when ``issue.period_key`` is set and an
        issue with that key exists (a scheduled run happens once per period, however many
        runners race)."""
        values: dict[str, Any] = {f.name: getattr(issue, f.name) for f in fields(issue)}
        values["updated_at"] = issue.created_at
        if issue.period_key is not None and self._period_taken(issue.period_key):
            return None
        savepoint = self.connection.begin_nested()
        try:
            new_id = inserted_id(self.connection, insert(issues).values(**values))
            savepoint.commit()
        except IntegrityError:
            savepoint.rollback()
            if issue.period_key is not None and self._period_taken(issue.period_key):
                return None  # another runner recorded this period first
            raise
        return IssueRecord(id=int(new_id), **values)

    def _period_taken(self, period_key: str) -> bool:
        found = self.connection.scalar(select(issues.c.id).where(issues.c.period_key == period_key))
        return found is not None

    def _first(self, query: Select[Any]) -> IssueRecord | None:
        row = self.connection.execute(query).mappings().first()
        return _record(row) if row else None

    def find_by_period(self, period_key: str) -> IssueRecord | None:
        """The issue recorded for this period key, or ``None``."""
        return self._first(select(issues).where(issues.c.period_key == period_key))

    def latest(self) -> IssueRecord | None:
        """The most recently recorded issue, or ``None``."""
        return self._first(select(issues).order_by(issues.c.id.desc()).limit(1))

    def list_recent(
        self, limit: int, *, include_bodies: bool, before_id: int | None = None
    ) -> list[IssueRecord]:
        """Up to ``limit`` issues, most recently recorded first, only those with
        ``id < before_id`` when given (the keyset of the next page); ``html`` and ``text`` are
        ``None`` (and unread) unless ``include_bodies``."""
        columns = list(issues.c) if include_bodies else _WITHOUT_BODIES
        query = select(*columns).order_by(issues.c.id.desc()).limit(limit)
        if before_id is not None:
            query = query.where(issues.c.id < before_id)
        rows = self.connection.execute(query).mappings()
        return [_record(row, bodies=include_bodies) for row in rows]

    def get(self, issue_id: int) -> IssueRecord | None:
        """The issue with this id, or ``None``."""
        return self._first(select(issues).where(issues.c.id == issue_id))

    def count(self) -> int:
        """How many issues are stored."""
        return int(self.connection.scalar(select(func.count()).select_from(issues)) or 0)

    def list_by_creation(self, *, descending: bool, offset: int, limit: int) -> list[IssueRecord]:
        """At most ``limit`` issues in creation order ``(created_at, id)``, newest first when
        ``descending``, skipping the first ``offset`` of that order."""
        order = (
            (issues.c.created_at.desc(), issues.c.id.desc())
            if descending
            else (issues.c.created_at.asc(), issues.c.id.asc())
        )
        rows = self.connection.execute(
            select(issues).order_by(*order).offset(offset).limit(limit)
        ).mappings()
        return [_record(row) for row in rows]
