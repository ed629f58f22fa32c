"""Engine construction for the dialects the SQL store supports.

SQLite: WAL, foreign keys on, pysqlite's transaction handling off, and writes begun with
``BEGIN IMMEDIATE``: the write lock up front, so a writer never fails mid-transaction on
another's lock (SQLAlchemy drops ``FOR UPDATE`` on SQLite).
PostgreSQL: connections pinged only after sitting idle (:func:`ping_idle_connections`).
Every wait on the database is bounded (:func:`bound_waits`).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.engine import URL, Connection, Engine, create_engine, make_url
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection, StaticPool

from ...json_encoding import dumps_text
from .stored_json import stored_json_loads

BEGIN_OPTION = "nc_sqlite_begin"
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


@dataclass(frozen=True)
class DbTimeouts:
    """How long each kind of wait on the database may last, in seconds (the ``db_*_timeout``
    settings; docs/decisions.md explains the defaults)."""

    #: Waiting for a connection: a free one from the pool, or (PostgreSQL) a new one.
    connect: int = 5
    #: PostgreSQL ``statement_timeout``: the server cancels a statement running longer.
    statement: float = 15.0
    #: PostgreSQL ``lock_timeout``, SQLite's busy timeout: waiting for another's lock.
    lock: float = 5.0
    #: PostgreSQL: a round trip waiting longer for the server's reply gives the connection up.
    reply: float = 20.0


def make_engine(database_url: str, *, timeouts: DbTimeouts | None = None, **kwargs: Any) -> Engine:
    """An engine for ``database_url`` configured for this store's transaction rules, every
    wait on the database bounded by ``timeouts`` (the defaults when not given)."""
    url = normalise_url(database_url)
    timeouts = timeouts or DbTimeouts()
    # Bound parameters can hold tokens and addresses: keep them out of exception text and logs.
    kwargs.setdefault("hide_parameters", True)
    kwargs.setdefault("json_serializer", dumps_text)  # the one encoder: pushed payload bytes
    kwargs.setdefault("json_deserializer", stored_json_loads)
    if "poolclass" not in kwargs and "pool" not in kwargs:  # the default pool waits for one
        kwargs.setdefault("pool_timeout", timeouts.connect)
    if url.get_backend_name() == "sqlite":
        engine = _sqlite_engine(url, **kwargs)
    else:
        idle_ping_seconds = kwargs.pop("idle_ping_seconds", IDLE_PING_SECONDS)
        engine = create_engine(url, **kwargs)
        ping_idle_connections(engine, idle_ping_seconds)
    bound_waits(engine, timeouts)
    return engine


def bound_waits(engine: Engine, timeouts: DbTimeouts) -> None:
    """Bound every wait of ``engine``'s new connections by ``timeouts`` (pool checkout is the
    pool's own ``pool_timeout``); a value ``connect_args`` already give is kept.

    PostgreSQL (psycopg 3): ``connect_timeout``, ``statement_timeout`` and ``lock_timeout`` as
    startup options (no round trip), and a :class:`.reply_bound.ReplyBoundConnection`.
    SQLite: the busy timeout, ``timeouts.lock``.
    """
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "do_connect")
        def _sqlite_busy_timeout(
            _dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]
        ) -> None:
            cparams.setdefault("timeout", timeouts.lock)  # sqlite3's busy timeout

        return
    if engine.dialect.name != "postgresql" or engine.dialect.driver != "psycopg":
        return
    from .reply_bound import ReplyBoundConnection

    @event.listens_for(engine, "do_connect")
    def _bounded_connect(
        _dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]
    ) -> ReplyBoundConnection:
        cparams.setdefault("connect_timeout", timeouts.connect)
        cparams["options"] = _with_server_timeouts(cparams.get("options", ""), timeouts)
        connection = ReplyBoundConnection.connect(*cargs, **cparams)
        connection.reply_timeout = timeouts.reply
        return connection


def _with_server_timeouts(options: str, timeouts: DbTimeouts) -> str:
    """libpq ``options`` with ``statement_timeout`` and ``lock_timeout`` added (in ms), each
    unless ``options`` already sets it."""
    added = [
        f"-c {name}={round(seconds * 1000)}"
        for name, seconds in (
            ("statement_timeout", timeouts.statement),
            ("lock_timeout", timeouts.lock),
        )
        if name not in options
    ]
    return " ".join([options, *added]).strip()


@contextmanager
def unbounded_statements(connection: Connection) -> Iterator[None]:
    """Inside a transaction of ``connection``: its statements may run as long as they take
    (a migration building an index on a large table). Lock waits stay bounded, so a
    migration waiting on a busy table fails instead of queueing every request behind it."""
    if connection.dialect.name != "postgresql":
        yield
        return
    raw: Any = connection.connection.dbapi_connection
    previous = getattr(raw, "reply_timeout", None)
    connection.exec_driver_sql("SET LOCAL statement_timeout = 0")
    if previous is not None:
        raw.reply_timeout = None
    try:
        yield
    finally:
        if previous is not None:
            raw.reply_timeout = previous


def ping_idle_connections(engine: Engine, idle_seconds: float) -> None:
    """Ping a pooled connection on checkout, replacing a dead one, only when it sat idle
    longer than ``idle_seconds``: ``pool_pre_ping`` costs a round trip on every checkout
    (bench: status_overhead). One that dies in steady use fails its request once
    (``503 db_unavailable``) and SQLAlchemy invalidates the whole pool.
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
    engine's :func:`ping_idle_connections` setting, else :data:`IDLE_PING_SECONDS`."""
    return _IDLE_PING_SECONDS.get(engine, IDLE_PING_SECONDS)


def is_in_memory(url: URL) -> bool:
    """Whether the SQLite ``url`` names an in-memory database rather than a file."""
    return url.database in (None, "", ":memory:")


def _sqlite_engine(url: URL, **kwargs: Any) -> Engine:
    # Each pooled connection to ``:memory:`` would open a database of its own; StaticPool
    # hands every caller the one connection, so they share it (tests, one-process tools).
    if is_in_memory(url) and kwargs.get("poolclass") is not StaticPool:
        raise ValueError(
            "an in-memory SQLite database cannot be shared; use a file path "
            "(or poolclass=StaticPool: one connection for every caller)"
        )
    engine = create_engine(url, connect_args={"check_same_thread": False}, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, "BEGIN"))

    return engine
