"""A read-only statement on a PostgreSQL connection each thread keeps for it (the key check).

The connection is taken from the engine's pool once and detached (so the engine's connect events set
it up), kept in autocommit (each run sees everything committed before it), and run through psycopg's
libpq wrapper (bench: status_overhead). The pool's rules hold: pinged after sitting idle
(:func:`.engine.idle_ping_seconds`); a dead or silent one (:mod:`.reply_bound`) fails one run,
raised as a disconnect, and the pool is discarded with it; a forked child never touches its
parent's; :meth:`DedicatedReadStatement.close` closes every thread's, and a thread's closes when it
ends. See docs/contributing/decisions/performance.md, "The key check on a connection of its own".
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from itertools import count
from typing import Any, cast

import psycopg
from psycopg import pq
from psycopg.adapt import PyFormat
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.sql.elements import ClauseElement

from ....tracing.statements import statement_span
from ..reply_bound import NoReply, reply_deadline, wait_for_reply
from .pooled_statement import DriverStatement, wrapped_driver_error

_names = count(1)


def _close_in_owner(connection: psycopg.Connection[Any], pid: int) -> None:
    """Close ``connection`` unless this process is a fork of the one that opened it (closing
    would end the parent's session: the socket is shared)."""
    if os.getpid() == pid and not connection.closed:
        connection.close()


class _ThreadConnection:
    """One thread's connection, the statement prepared on it, and its result loaders."""

    def __init__(self, connection: psycopg.Connection[Any], name: bytes, sql: bytes) -> None:
        self.connection = connection
        self.pid = os.getpid()
        self.name = name
        self.used_at = time.monotonic()
        self._dumpers: dict[type, Callable[[Any], Any]] = {}
        self.prepare(sql)
        connection.pgconn.send_describe_prepared(name)
        description = self._reply()
        self._check(description, pq.ExecStatus.COMMAND_OK)
        adapters = connection.adapters
        self._loaders: list[tuple[int, Callable[[Any], Any]]] = []
        for column in range(description.nfields):
            oid = description.ftype(column)
            loader = adapters.get_loader(oid, pq.Format.TEXT) or adapters.get_loader(
                0, pq.Format.TEXT
            )
            assert loader is not None  # psycopg always has a loader for unknown (oid 0)
            self._loaders.append((column, loader(oid, connection).load))

    def prepare(self, sql: bytes) -> None:
        self.connection.pgconn.send_prepare(self.name, sql)
        self._check(self._reply(), pq.ExecStatus.COMMAND_OK)

    def first_row(self, values: tuple[Any, ...]) -> tuple[Any, ...] | None:
        self.connection.pgconn.send_query_prepared(self.name, [self._dump(v) for v in values])
        result = self._reply()
        if result.status != pq.ExecStatus.TUPLES_OK:
            self._check(result, pq.ExecStatus.TUPLES_OK)
        self.used_at = time.monotonic()
        if result.ntuples == 0:
            return None
        value = result.get_value
        # A list, not a generator: this runs on every request.
        return tuple(
            [load(raw) if (raw := value(0, i)) is not None else None for i, load in self._loaders]
        )

    def _reply(self) -> pq.abc.PGresult:
        """The reply to the request just sent, waited for at most the connection's reply
        timeout (:func:`.reply_bound.wait_for_reply`)."""
        connection, pgconn = self.connection, self.connection.pgconn
        deadline = reply_deadline(connection)
        wait_for_reply(connection, deadline)
        result = pgconn.get_result()
        while True:  # up to libpq's end-of-reply marker, which may still be on its way
            wait_for_reply(connection, deadline)
            if pgconn.get_result() is None:
                break
        if result is None:
            raise psycopg.OperationalError("the server sent no result")
        return result

    def _dump(self, value: Any) -> Any:
        if value is None:
            return None
        kind = type(value)
        dump = self._dumpers.get(kind)
        if dump is None:
            dumper = self.connection.adapters.get_dumper(kind, PyFormat.TEXT)
            dump = self._dumpers[kind] = dumper(kind, self.connection).dump
        return dump(value)

    def _check(self, result: pq.abc.PGresult, expected: pq.ExecStatus) -> None:
        """Raise the driver's error for a failed ``result``, as psycopg's cursor would."""
        if result.status == expected:
            return
        sqlstate = result.error_field(pq.DiagnosticField.SQLSTATE)
        message = result.error_message.decode("utf-8", "replace").strip() or "query failed"
        error_class: type[psycopg.Error] = psycopg.OperationalError
        if sqlstate is not None:
            try:
                error_class = psycopg.errors.lookup(sqlstate.decode("ascii"))
            except KeyError:
                error_class = psycopg.DatabaseError
        raise error_class(message)


class _ThreadSlot(threading.local):
    held: _ThreadConnection | None = None
    closer: weakref.finalize[Any, Any] | None = None


class DedicatedReadStatement:
    """``statement`` (a read-only ``SELECT``) run on a psycopg 3 connection of each thread's
    own; :meth:`first_row` has :class:`.PooledStatement`'s contract."""

    def __init__(self, engine: Engine, statement: ClauseElement, *, idle_ping_seconds: float):
        self.engine = engine
        dialect_class: Callable[..., Dialect] = type(engine.dialect)
        numbered = dialect_class(paramstyle="numeric_dollar")  # $1, as libpq takes them
        self._driver = DriverStatement(statement, numbered)
        self.sql = self._driver.sql
        self._sql_bytes = self.sql.encode()
        self._name = f"nc_read_{next(_names)}".encode()
        self._idle_ping_seconds = idle_ping_seconds
        self._slot = _ThreadSlot()
        self._closers: set[weakref.finalize[Any, Any]] = set()
        self._closers_lock = threading.Lock()

    def first_row(self, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """Run the statement with ``params`` (by bound parameter name); its first row, or
        ``None`` when it has none.

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        values = self._driver.parameters(params)
        held = self._connection()
        try:
            try:
                with statement_span(self.engine, self.sql):
                    return held.first_row(values)
            except psycopg.errors.InvalidSqlStatementName:
                held.prepare(self._sql_bytes)  # a pooler dropped it: prepare it again, once
                with statement_span(self.engine, self.sql):
                    return held.first_row(values)
        except psycopg.Error as error:
            dbapi_connection: Any = held.connection
            lost = self.engine.dialect.is_disconnect(cast(Any, error), dbapi_connection, None)
            if lost:
                self._discard()
                self.engine.dispose(close=False)  # the pooled ones likely died with it
            raise self._wrapped(error, lost=lost) from error

    def close(self) -> None:
        """Close every thread's connection (each thread opens a new one on its next run)."""
        with self._closers_lock:
            closers, self._closers = self._closers, set()
        for closer in closers:
            closer()

    def _connection(self) -> _ThreadConnection:
        slot = self._slot
        held = slot.held
        if held is not None and held.pid != os.getpid():
            self._forget()  # opened by the parent of this forked process: never touch it
            held = None
        if held is not None and held.connection.closed:
            self._discard()
            held = None
        if (
            held is not None
            and time.monotonic() - held.used_at > self._idle_ping_seconds
            and not self._alive(held)
        ):
            self._discard()
            self.engine.dispose(close=False)  # the pooled ones likely died with it
            held = None
        if held is None:
            held = self._connect()
        return held

    def _alive(self, held: _ThreadConnection) -> bool:
        """Whether ``held`` answers a ping.

        :raises sqlalchemy.exc.DBAPIError: no reply in time: the server is hung, and a new
            connection would wait its whole connect timeout as well.
        """
        try:
            return bool(self.engine.dialect.do_ping(cast(Any, held.connection)))
        except NoReply as error:
            self._discard()
            self.engine.dispose(close=False)  # the pooled ones would wait as long
            raise self._wrapped(error, lost=True) from error
        except psycopg.Error:
            return False

    def _connect(self) -> _ThreadConnection:
        dbapi_error = self.engine.dialect.loaded_dbapi.Error
        try:
            proxy = self.engine.raw_connection()
        except dbapi_error as error:  # the pool does not wrap a failed connect
            raise self._wrapped(error, lost=False) from error
        proxy.detach()  # ours now: the pool neither lends nor closes it
        connection = cast(psycopg.Connection[Any], proxy.dbapi_connection)  # the caller's check
        pid = os.getpid()
        try:
            connection.autocommit = True
            held = _ThreadConnection(connection, self._name, self._sql_bytes)
        except psycopg.Error as error:
            _close_in_owner(connection, pid)
            raise self._wrapped(error, lost=False) from error
        closer = weakref.finalize(held, _close_in_owner, connection, pid)
        with self._closers_lock:
            self._closers = {c for c in self._closers if c.alive}  # ended threads' are done
            self._closers.add(closer)
        self._slot.held, self._slot.closer = held, closer
        return held

    def _discard(self) -> None:
        """Close this thread's connection and forget it."""
        closer = self._slot.closer
        self._slot.held = self._slot.closer = None
        if closer is not None:
            closer()

    def _forget(self) -> None:
        """Forget this thread's connection without closing it (a forked child's copy)."""
        closer = self._slot.closer
        self._slot.held = self._slot.closer = None
        if closer is not None:
            closer.detach()

    def _wrapped(self, error: Exception, *, lost: bool) -> BaseException:
        return wrapped_driver_error(self.engine, self.sql, error, lost=lost)
