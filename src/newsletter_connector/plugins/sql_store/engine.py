"""Engine construction for the dialects the SQL store supports.

SQLite: WAL, foreign keys on, pysqlite's transaction handling off, and writes begun with
``BEGIN IMMEDIATE``: the write lock up front, so a writer never fails mid-transaction on
another's lock (SQLAlchemy drops ``FOR UPDATE`` on SQLite).
PostgreSQL: connections pinged only after sitting idle (:func:`ping_idle_connections`);
behind a transaction pooler (PgBouncer) no server-side prepared statement and no start-up
option (:func:`behind_transaction_pooler`). MySQL and MariaDB: ``READ COMMITTED``, UTF-8,
UTC and strict, each connection's waits bounded as it connects, short reads on an engine of
their own (:func:`short_read_engine`). Every wait on the database is bounded
(:func:`bound_waits`), a short read's by a shorter deadline.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.engine import URL, Connection, Engine, create_engine, make_url
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection, StaticPool

from ...json_encoding import dumps_text
from ...settings import SettingsError
from ...short_reads import in_short_reads
from .stored_json import stored_json_loads

BEGIN_OPTION = "nc_sqlite_begin"
#: A pooled PostgreSQL connection idle longer than this is pinged before it is handed out.
IDLE_PING_SECONDS = 1.0
_CHECKED_IN_AT = "nc_checked_in_at"
_IDLE_PING_SECONDS: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()
_TRANSACTION_POOLED: weakref.WeakSet[Engine] = weakref.WeakSet()
#: MySQL and MariaDB: how to make each engine's short-read engine, and the ones made.
_SHORT_READ_FACTORIES: weakref.WeakKeyDictionary[Engine, Callable[[], Engine]] = (
    weakref.WeakKeyDictionary()
)
_SHORT_READ_ENGINES: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()
_SHORT_READ_SETUPS: weakref.WeakKeyDictionary[Engine, list[Callable[[Engine], None]]] = (
    weakref.WeakKeyDictionary()
)
_SHORT_READ_LOCK = threading.Lock()
_SQLITE_BUSY_MS = "nc_busy_timeout_ms"
#: SQLite: the busy timeouts, in ms, of a transaction and of one inside ``short_reads()``.
_SQLITE_BUSY: weakref.WeakKeyDictionary[Engine, tuple[int, int]] = weakref.WeakKeyDictionary()


#: The driver a URL naming MySQL or MariaDB without one gets (the ``mysql`` extra's).
MYSQL_DRIVER = "pymysql"


def normalise_url(database_url: str) -> URL:
    """The URL with PostgreSQL pointed at psycopg 3 (``postgresql://`` means psycopg here),
    and MySQL and MariaDB without a driver at PyMySQL."""
    url = make_url(database_url)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    elif url.drivername in ("mysql", "mariadb"):
        url = url.set(drivername=f"{url.drivername}+{MYSQL_DRIVER}")
    return url


def is_mysql(url_or_dialect_name: str) -> bool:
    """Whether a backend or dialect name is MySQL's or MariaDB's (``mariadb+…`` URLs have a
    dialect name of their own)."""
    return url_or_dialect_name in ("mysql", "mariadb")


@dataclass(frozen=True)
class DbTimeouts:
    """How long each kind of wait on the database may last, in seconds (the ``db_*_timeout``
    settings; docs/contributing/decisions/performance.md explains the defaults)."""

    #: Waiting for a connection: a free one from the pool, or (PostgreSQL) a new one.
    connect: int = 5
    #: PostgreSQL ``statement_timeout``: the server cancels a statement running longer.
    statement: float = 15.0
    #: PostgreSQL ``lock_timeout``, SQLite's busy timeout: waiting for another's lock.
    lock: float = 5.0
    #: PostgreSQL: a round trip waiting longer for the server's reply gives the connection up.
    reply: float = 20.0
    #: Inside ``short_reads()``: PostgreSQL's reply bound, SQLite's busy timeout.
    short_reply: float = 3.0


def make_engine(
    database_url: str,
    *,
    timeouts: DbTimeouts | None = None,
    transaction_pooler: bool = False,
    **kwargs: Any,
) -> Engine:
    """An engine for ``database_url`` configured for this store's transaction rules, every
    wait on the database bounded by ``timeouts`` (the defaults when not given).

    ``transaction_pooler``: PostgreSQL is reached through a pooler in transaction pooling mode
    (PgBouncer's ``pool_mode = transaction``), which may run each transaction on a different
    server connection: no server-side prepared statement (psycopg's ``prepare_threshold``
    off) and no start-up ``options`` (set the server timeouts on the role instead).
    """
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
    elif is_mysql(url.get_backend_name()):
        engine = _mysql_engine(url, timeouts, **kwargs)
        short = replace(
            timeouts, reply=timeouts.short_reply, lock=min(timeouts.lock, timeouts.short_reply)
        )
        _SHORT_READ_FACTORIES[engine] = partial(_mysql_engine, url, short, **kwargs)
        event.listen(engine, "engine_disposed", _dispose_short_read_engine)
    else:
        idle_ping_seconds = kwargs.pop("idle_ping_seconds", IDLE_PING_SECONDS)
        if transaction_pooler:
            # A statement psycopg prepares on one server connection is unknown on the next.
            connect_args = kwargs.setdefault("connect_args", {})
            connect_args.setdefault("prepare_threshold", None)
        engine = _driver_engine(url, **kwargs)
        if transaction_pooler:
            _TRANSACTION_POOLED.add(engine)
        ping_idle_connections(engine, idle_ping_seconds)
    bound_waits(engine, timeouts)
    return engine


#: MySQL's and MariaDB's session: UTC, and refusing what it would otherwise store changed
#: (a string cut short, a zero date). ``ANSI_QUOTES`` stays off: SQLAlchemy quotes with ``.
_MYSQL_SESSION = (
    "SET time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"
)


def _mysql_engine(url: URL, timeouts: DbTimeouts, **kwargs: Any) -> Engine:
    """MySQL or MariaDB at READ COMMITTED (InnoDB's REPEATABLE READ would take gap locks on
    every keyset read and show a transaction's reads as of its first), in UTF-8 and UTC, each
    wait bounded: connecting, and each read or write on the socket (the driver's timeouts),
    a lock wait (``innodb_lock_wait_timeout`` for rows, ``lock_wait_timeout`` for tables,
    whole seconds) and a statement (MariaDB's
    ``max_statement_time``; MySQL's ``max_execution_time``, which bounds a ``SELECT`` only)."""
    kwargs.setdefault("isolation_level", "READ COMMITTED")
    connect_args = kwargs.setdefault("connect_args", {})
    connect_args.setdefault("charset", "utf8mb4")
    connect_args.setdefault("connect_timeout", timeouts.connect)
    connect_args.setdefault("read_timeout", timeouts.reply)
    connect_args.setdefault("write_timeout", timeouts.reply)
    connect_args.setdefault("init_command", _MYSQL_SESSION)
    engine = _driver_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _bound_server_waits(dbapi_connection: Any, _record: Any) -> None:
        # After SQLAlchemy's own first-connect listener: the dialect knows MariaDB by now.
        statement = (
            f"max_statement_time = {timeouts.statement:g}"
            if getattr(engine.dialect, "is_mariadb", False)
            else f"max_execution_time = {round(timeouts.statement * 1000)}"
        )
        lock = max(1, math.ceil(timeouts.lock))
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(
                f"SET SESSION innodb_lock_wait_timeout = {lock}, lock_wait_timeout = {lock}, "
                f"{statement}"
            )
        finally:
            cursor.close()

    return engine


def short_read_engine(engine: Engine) -> Engine:
    """The engine a transaction begun inside ``short_reads()`` runs on: ``engine`` itself,
    but on MySQL and MariaDB, where a connection's socket timeouts are fixed when it connects,
    an engine like it (made on first use, closed with it) whose connections wait at most
    ``short_reply`` seconds for the server."""
    factory = _SHORT_READ_FACTORIES.get(engine)
    if factory is None:
        return engine
    with _SHORT_READ_LOCK:
        short = _SHORT_READ_ENGINES.get(engine)
        if short is None:
            short = _SHORT_READ_ENGINES[engine] = factory()
            for setup in _SHORT_READ_SETUPS.get(engine, ()):
                setup(short)
        return short


def prepare_short_read_engine(engine: Engine, setup: Callable[[Engine], None]) -> None:
    """Run ``setup`` on ``engine``'s short-read engine (:func:`short_read_engine`) as it is
    made, or now if it is made already, as what ``setup`` does to ``engine`` (its statement
    tracing) must hold for every statement; nothing where short reads run on ``engine``."""
    if engine not in _SHORT_READ_FACTORIES:
        return
    with _SHORT_READ_LOCK:
        _SHORT_READ_SETUPS.setdefault(engine, []).append(setup)
        short = _SHORT_READ_ENGINES.get(engine)
    if short is not None:
        setup(short)


def _dispose_short_read_engine(engine: Engine) -> None:
    with _SHORT_READ_LOCK:
        short = _SHORT_READ_ENGINES.pop(engine, None)
    if short is not None:
        short.dispose()


def behind_transaction_pooler(engine: Engine) -> bool:
    """Whether ``engine`` reaches PostgreSQL through a transaction pooler: a session lasts
    one transaction there (no prepared statement, ``SET`` or session lock outlives it)."""
    return engine in _TRANSACTION_POOLED


#: The modules the ``postgres`` extra installs (psycopg and its bundled libpq build).
_POSTGRES_DRIVER = frozenset({"psycopg", "psycopg_binary"})


def _driver_engine(url: URL, **kwargs: Any) -> Engine:
    """``create_engine``, which imports the dialect's driver.

    :raises SettingsError: the URL is PostgreSQL and psycopg is not installed (the ``postgres``
        extra), or MySQL or MariaDB without a driver named and PyMySQL is not installed (the
        ``mysql`` extra); any other missing module is raised as it is.
    """
    try:
        return create_engine(url, **kwargs)
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        backend = url.get_backend_name()
        if backend == "postgresql" and missing in _POSTGRES_DRIVER:
            kind, driver, extra = "a PostgreSQL", "psycopg", "postgres"
        elif is_mysql(backend) and missing == MYSQL_DRIVER:
            kind, driver, extra = "a MySQL or MariaDB", "PyMySQL", "mysql"
        else:
            raise
        raise SettingsError(
            f"database_url is {kind} database, but its driver ({driver}) is not installed: "
            f"install the package with its {extra} extra, "
            f"pip install 'newsletter-connector[{extra}]'"
        ) from error


def bound_waits(engine: Engine, timeouts: DbTimeouts) -> None:
    """Bound every wait of ``engine``'s new connections by ``timeouts`` (pool checkout is the
    pool's own ``pool_timeout``); a value ``connect_args`` already give is kept.

    PostgreSQL (psycopg 3): ``connect_timeout``, ``statement_timeout`` and ``lock_timeout`` as
    startup options (no round trip; not behind a transaction pooler, which would run them on
    a server connection other clients share), and a
    :class:`.reply_bound.ReplyBoundConnection`, its short reads bounded by
    ``timeouts.short_reply``.
    SQLite: the busy timeout, ``timeouts.lock``; ``timeouts.short_reply`` for a transaction
    begun inside ``short_reads()``.
    """
    if engine.dialect.name == "sqlite":
        _bound_sqlite_waits(engine, timeouts)
        return
    if engine.dialect.name != "postgresql" or engine.dialect.driver != "psycopg":
        return
    from .reply_bound import ReplyBoundConnection

    pooled = behind_transaction_pooler(engine)

    @event.listens_for(engine, "do_connect")
    def _bounded_connect(
        _dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]
    ) -> ReplyBoundConnection:
        cparams.setdefault("connect_timeout", timeouts.connect)
        if not pooled:
            cparams["options"] = _with_server_timeouts(cparams.get("options", ""), timeouts)
        connection = ReplyBoundConnection.connect(*cargs, **cparams)
        connection.reply_timeout = timeouts.reply
        connection.short_reply_timeout = timeouts.short_reply
        return connection


def _bound_sqlite_waits(engine: Engine, timeouts: DbTimeouts) -> None:
    lock_ms = round(timeouts.lock * 1000)
    _SQLITE_BUSY[engine] = (lock_ms, min(lock_ms, round(timeouts.short_reply * 1000)))

    @event.listens_for(engine, "do_connect")
    def _sqlite_busy_timeout(
        _dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]
    ) -> None:
        cparams.setdefault("timeout", timeouts.lock)  # sqlite3's busy timeout


def _sqlite_busy_timeout_for_this_transaction(connection: Connection) -> None:
    """Before a SQLite ``BEGIN``, which is where a writer waits: the busy timeout of a short
    read inside ``short_reads()``, the lock timeout otherwise (set only when it changes)."""
    busy = _SQLITE_BUSY.get(connection.engine)
    if busy is None:
        return
    wanted = busy[1] if in_short_reads() else busy[0]
    info = connection.connection.info
    if info.get(_SQLITE_BUSY_MS, busy[0]) != wanted:
        connection.connection.dbapi_connection.execute(  # type: ignore[union-attr]
            f"PRAGMA busy_timeout = {wanted}"
        )
        info[_SQLITE_BUSY_MS] = wanted


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
    no_reply: tuple[type[BaseException], ...] = ()
    if engine.dialect.driver == "psycopg":  # imported only when PostgreSQL is in use
        from .reply_bound import NoReply

        no_reply = (NoReply,)

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
        except no_reply:
            # A hung server: a new connection would wait its whole connect timeout as well.
            # This connection is invalidated; so are the rest, which would wait as long.
            engine.dispose(close=False)
            raise
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


#: The SQLite function that lowercases text as :meth:`str.lower` does (see ``unicode_lower``).
UNICODE_LOWER = "nc_lower"


def _unicode_lower(text: str | None) -> str | None:
    return None if text is None else text.lower()


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
        # SQLite's own lower() folds ASCII only; name search folds case as Python does.
        dbapi_connection.create_function(UNICODE_LOWER, 1, _unicode_lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        _sqlite_busy_timeout_for_this_transaction(connection)
        connection.exec_driver_sql(connection.get_execution_options().get(BEGIN_OPTION, "BEGIN"))

    return engine
