"""Engine construction for the dialects the SQL store supports.

SQLite runs in WAL mode with foreign keys on. pysqlite's own transaction handling is switched
off and every transaction is begun explicitly: ``BEGIN IMMEDIATE`` for writes, so a writer takes
the write lock up front instead of failing mid-transaction when another writer got there first
(SQLAlchemy would silently drop ``FOR UPDATE`` on SQLite; this is the lock it cannot give).

PostgreSQL connections are pinged on checkout only when they sat idle in the pool for longer
than :data:`IDLE_PING_SECONDS` (see :func:`ping_idle_connections`), not on every checkout.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.engine import URL, Connection, Engine, create_engine, make_url
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection

from .stored_json import stored_json_loads

BEGIN_OPTION = "nc_sqlite_begin"
SQLITE_BUSY_TIMEOUT_MS = 30_000
#: A pooled PostgreSQL connection idle longer than this is pinged before it is handed out.
IDLE_PING_SECONDS = 1.0
_CHECKED_IN_AT = "nc_checked_in_at"
_IDLE_PING_SECONDS: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()


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
    kwargs.setdefault("json_deserializer", stored_json_loads)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, **kwargs)
    idle_ping_seconds = kwargs.pop("idle_ping_seconds", IDLE_PING_SECONDS)
    engine = create_engine(url, **kwargs)
    ping_idle_connections(engine, idle_ping_seconds)
    return engine


def ping_idle_connections(engine: Engine, idle_seconds: float) -> None:
    """Ping a pooled connection on checkout when it sat idle longer than ``idle_seconds``.

    ``pool_pre_ping`` pings on *every* checkout: one round trip more per request (issue 10
    measured ``/status`` on PostgreSQL at 0.41x a bare app with it). A connection in steady use
    is not pinged. One that sat idle (the server may have restarted or dropped it meanwhile) is
    pinged, and a dead one is replaced before it is used. A connection that dies while in
    steady use fails its request once (``503 db_unavailable``); SQLAlchemy then invalidates
    every connection the pool held at that moment, so the requests after it reconnect.
    """
    _IDLE_PING_SECONDS[engine] = idle_seconds

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_CHECKED_IN_AT] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(
        dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        checked_in_at = record.info.get(_CHECKED_IN_AT)
        if checked_in_at is None or time.monotonic() - checked_in_at <= idle_seconds:
            return  # new, or in steady use
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as error:
            raise exc.DisconnectionError("idle connection failed its ping") from error
        if not alive:
            # The pool discards this connection and checks out a fresh one.
            raise exc.DisconnectionError("idle connection failed its ping")


def idle_ping_seconds(engine: Engine) -> float:
    """How long a connection of ``engine`` may sit idle before it is pinged before use: the
    engine's own setting (:func:`ping_idle_connections`), else :data:`IDLE_PING_SECONDS` (a
    host's engine). Connections held outside the pool follow the same rule."""
    return _IDLE_PING_SECONDS.get(engine, IDLE_PING_SECONDS)


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
