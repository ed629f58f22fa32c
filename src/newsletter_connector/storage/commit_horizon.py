"""Commit horizons: keyset walks over ids that never skip a late commit (PostgreSQL, MySQL
and MariaDB; SQLite's writers take turns). Published through :mod:`.host_sql`."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Select, Table, bindparam, event, false, func, select, text
from sqlalchemy.engine import Connection, Engine, create_engine

# Commit horizons: keyset walks over PostgreSQL sequence ids that never skip a late commit.
#
# Ids are drawn in one order and committed in another, so a page could see id 8 before id 7
# commits and never walk 7. An insert takes a table's advisory lock *shared* until its
# transaction ends (:meth:`CommitHorizon.enter_insert`, :meth:`CommitHorizon.row_entering`); a
# page first takes it *exclusively* at session level, which waits for the inserts in flight,
# reads ``max(id)`` in a snapshot taken while holding it, and lets go
# (:meth:`CommitHorizon.horizon`). Every id up to that horizon is final and every later id is
# larger, so the page reads ``id <= horizon``. SQLite's writers take turns: no gap there.
# See docs/contributing/decisions/performance.md, "Commit horizons instead of inserts taking
# turns".
#
# MySQL and MariaDB have no shared advisory lock: a row of ``nc_commit_horizons`` named by the
# lock's number stands for it. An insert reads the row ``LOCK IN SHARE MODE`` (held until its
# transaction ends); the horizon is read on a connection of its own, in a short transaction
# that locks the row ``FOR UPDATE`` (which waits for the inserts in flight and holds back new
# ones), reads ``max(id)`` and commits. The page's own transaction could not let go of a row
# lock before it ends; a pool of its own keeps a page from waiting for a connection that
# another page holds.

_ENTER_INSERT = text("SELECT pg_advisory_xact_lock_shared(:lock)")
_BARRIER = text("SELECT pg_advisory_lock(:lock)")
#: The table of the rows that stand for horizons on MySQL and MariaDB.
HORIZONS_TABLE = "nc_commit_horizons"
_ENTER_INSERT_MYSQL = text(
    f"SELECT name FROM {HORIZONS_TABLE} WHERE name = :name LOCK IN SHARE MODE"  # noqa: S608
)
_BARRIER_MYSQL = text(f"SELECT name FROM {HORIZONS_TABLE} WHERE name = :name FOR UPDATE")  # noqa: S608
_ADD_HORIZON_MYSQL = text(
    f"INSERT INTO {HORIZONS_TABLE} (name) VALUES (:name)"  # noqa: S608
    " ON DUPLICATE KEY UPDATE name = name"
)
#: Per engine (MySQL, MariaDB): the engine whose pool reads horizons.
_HORIZON_ENGINES: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()
_HORIZON_ENGINES_LOCK = threading.Lock()


def _is_mysql(connection: Connection) -> bool:
    return connection.dialect.name in ("mysql", "mariadb")


def _horizon_engine(engine: Engine) -> Engine:
    """An engine like ``engine`` (same driver arguments and connection events) with a pool of
    its own, for reading horizons beside the transactions that need them."""
    with _HORIZON_ENGINES_LOCK:
        found = _HORIZON_ENGINES.get(engine)
        if found is None:
            found = create_engine(engine.url, pool=engine.pool.recreate(), hide_parameters=True)
            _HORIZON_ENGINES[engine] = found
            event.listen(engine, "engine_disposed", _dispose_horizon_engine)
        return found


def _dispose_horizon_engine(engine: Engine) -> None:
    """Close the horizon pool's connections with ``engine``'s own."""
    with _HORIZON_ENGINES_LOCK:
        found = _HORIZON_ENGINES.pop(engine, None)
    if found is not None:
        found.dispose()


SelectT = TypeVar("SelectT", bound=Select[Any])


@dataclass(frozen=True)
class CommitHorizon:
    """The horizon of one table's sequence id ``column``, guarded by advisory lock ``lock``."""

    lock: int
    column: ColumnElement[int]

    @property
    def name(self) -> str:
        """The name of the row that stands for this horizon on MySQL and MariaDB."""
        return str(self.lock)

    def enter_insert(self, connection: Connection) -> None:
        """Call in the inserting transaction before the insert draws its id (PostgreSQL,
        MySQL and MariaDB; a no-op on SQLite). Held until that transaction ends."""
        if connection.dialect.name == "postgresql":
            connection.execute(_ENTER_INSERT, {"lock": self.lock})
        elif (
            _is_mysql(connection)
            and connection.execute(_ENTER_INSERT_MYSQL, {"name": self.name}).first() is None
        ):
            self._add_row(connection.engine)
            connection.execute(_ENTER_INSERT_MYSQL, {"name": self.name}).one()

    def _add_row(self, engine: Engine) -> None:
        """Store this horizon's row (MySQL, MariaDB), committed at once: a lock on a row that
        is not there holds nothing back."""
        with _horizon_engine(engine).begin() as connection:
            connection.execute(_ADD_HORIZON_MYSQL, {"name": self.name})

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

        PostgreSQL, MySQL and MariaDB. Waits for inserts in flight to end (on MySQL and
        MariaDB, up to the server's lock wait timeout).
        """
        if _is_mysql(connection):
            return self._mysql_horizon(connection.engine)
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

    def _mysql_horizon(self, engine: Engine) -> int | None:
        with _horizon_engine(engine).begin() as side:
            if side.execute(_BARRIER_MYSQL, {"name": self.name}).first() is None:
                side.execute(_ADD_HORIZON_MYSQL, {"name": self.name})
                side.execute(_BARRIER_MYSQL, {"name": self.name}).one()
            # READ COMMITTED: this read sees every insert that held the row before the lock.
            largest = side.scalar(select(func.max(self.column)))
        return None if largest is None else int(largest)

    def bound(self, connection: Connection, query: SelectT) -> SelectT:
        """``query`` limited to ids at or below the horizon (unchanged on SQLite)."""
        if connection.dialect.name == "sqlite":
            return query
        largest = self.horizon(connection)
        return query.where(false() if largest is None else self.column <= largest)
