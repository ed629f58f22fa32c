"""Commit horizons: keyset walks over PostgreSQL sequence ids that never skip a late commit.

Two transactions draw ids 7 and 8; the one holding 8 commits first. A page read in between
sees 8 but not 7, hands out the cursor 8, and 7 — committed a moment later — is never walked.
(SQLite has no such gap: its writers take turns with ``BEGIN IMMEDIATE``.)

On PostgreSQL an insert first takes a *shared* transaction-level advisory lock
(:meth:`CommitHorizon.enter_insert`), so inserts still run side by side and commit as a group.
A walk page first passes a barrier (:meth:`CommitHorizon.horizon`): it takes the same lock
*exclusively* at session level, which waits until every insert that holds it has committed or
rolled back; it reads the largest committed id while holding the lock, and lets go. Every id up
to that horizon is then final (committed or never to exist), and every id drawn later is
larger, so the page reads ``id <= horizon`` and cannot skip. The lock is held for one index
look-up, not for the page's query.

The outbox's freeze passes the same barrier in statements of its own
(:mod:`.outbox_claims`), to read its frontier in the horizon's snapshot.

Taking the lock exclusively for every insert until its commit would be as safe, but signups
would take turns (about a third of the bare insert rate on PostgreSQL).
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
        """A one-row ``SELECT`` of the bound parameters ``columns`` (typed as ``table``'s) that
        enters the horizon as it is read, for ``insert(table).from_select(columns, row)`` on
        PostgreSQL: the shared lock is taken before the row's id is drawn, in the insert's own
        round trip instead of a statement of its own. The lock is in a subquery the row is
        read from (``OFFSET 0`` keeps the planner from flattening it away). The parameters are
        named ``prefix`` + column name."""
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
