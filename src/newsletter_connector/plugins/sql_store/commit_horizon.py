"""Commit horizons: keyset walks over PostgreSQL sequence ids that never skip a late commit.

Ids are drawn in one order and committed in another, so a page could see id 8 before id 7
commits and never walk 7. An insert takes a table's advisory lock *shared* until its
transaction ends (:meth:`CommitHorizon.enter_insert`, :meth:`CommitHorizon.row_entering`); a
page first takes it *exclusively* at session level, which waits for the inserts in flight,
reads ``max(id)`` in a snapshot taken while holding it, and lets go
(:meth:`CommitHorizon.horizon`). Every id up to that horizon is final and every later id is
larger, so the page reads ``id <= horizon``. SQLite's writers take turns: no gap there.
See docs/contributing/decisions/performance.md, "Commit horizons instead of inserts taking turns".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select, Table, bindparam, false, func, select, text
from sqlalchemy.engine import Connection

_ENTER_INSERT = text("SELECT pg_advisory_xact_lock_shared(:lock)")
_BARRIER = text("SELECT pg_advisory_lock(:lock)")

SelectT = TypeVar("SelectT", bound=Select[Any])


@dataclass(frozen=True)
class CommitHorizon:
    """The horizon of one table's sequence id ``column``, guarded by advisory lock ``lock``."""

    lock: int
    column: ColumnElement[int]

    def enter_insert(self, connection: Connection) -> None:
        """Call in the inserting transaction before the insert draws its id (PostgreSQL only;
        a no-op elsewhere). Held until that transaction ends."""
        if connection.dialect.name == "postgresql":
            connection.execute(_ENTER_INSERT, {"lock": self.lock})

    def row_entering(
        self, table: Table, columns: Sequence[str], *, prefix: str = ""
    ) -> Select[Any]:
        """A one-row ``SELECT`` of the bound parameters ``columns`` (typed as ``table``'s,
        named ``prefix`` + column name) that takes the shared lock as it is read, before the
        row's id is drawn: for ``insert(table).from_select(columns, row)`` on PostgreSQL, in
        the insert's own round trip. ``OFFSET 0`` keeps the planner from flattening it away."""
        entered = (
            select(func.pg_advisory_xact_lock_shared(self.lock).label("entered"))
            .offset(0)
            .subquery("horizon")
        )
        values = [bindparam(prefix + name, type_=table.c[name].type) for name in columns]
        return select(*values).select_from(entered)

    def horizon(self, connection: Connection) -> int | None:
        """The largest id below which nothing can still appear (``None``: no rows yet).

        PostgreSQL only. Waits for inserts in flight to end, for as long as they take.
        """
        connection.execute(_BARRIER, {"lock": self.lock})
        try:
            # Under READ COMMITTED this statement's snapshot is taken as it starts, while the
            # lock is held: no insert is in flight, so every id up to the maximum is final.
            row = connection.execute(
                select(
                    select(func.max(self.column)).scalar_subquery(),
                    func.pg_advisory_unlock(bindparam("lock")),
                ),
                {"lock": self.lock},
            ).one()
        except BaseException:
            # A session lock outlives the transaction: never return this connection to the
            # pool while it may still hold the lock (closing it releases the lock).
            connection.invalidate()
            raise
        return None if row[0] is None else int(row[0])

    def bound(self, connection: Connection, query: SelectT) -> SelectT:
        """``query`` limited to ids at or below the horizon (unchanged off PostgreSQL)."""
        if connection.dialect.name != "postgresql":
            return query
        largest = self.horizon(connection)
        return query.where(false() if largest is None else self.column <= largest)
