"""Engine construction for the dialects the SQL store supports.

SQLite runs in WAL mode with foreign keys on. pysqlite's own transaction handling is switched
off and every transaction is begun explicitly: ``BEGIN IMMEDIATE`` for writes, so a writer takes
the write lock up front instead of failing mid-transaction when another writer got there first
(SQLAlchemy would silently drop ``FOR UPDATE`` on SQLite; this is the lock it cannot give).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, create_engine, make_url

BEGIN_OPTION = "nc_sqlite_begin"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def normalise_url(database_url: str) -> URL:
    """The URL with PostgreSQL pointed at psycopg 3 (``postgresql://`` means psycopg here)."""
    url = make_url(database_url)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def make_engine(database_url: str, **kwargs: Any) -> Engine:
    """An engine for ``database_url`` configured for this store's transaction rules."""
    url = normalise_url(database_url)
    # Bound parameters can hold tokens and addresses: keep them out of exception text and logs.
    kwargs.setdefault("hide_parameters", True)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, **kwargs)
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def _sqlite_engine(url: URL, **kwargs: Any) -> Engine:
    if url.database in (None, "", ":memory:"):
        raise ValueError("an in-memory SQLite database cannot be shared; use a file path")
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        **kwargs,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, "BEGIN"))

    return engine
