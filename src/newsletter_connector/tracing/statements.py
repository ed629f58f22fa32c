"""A client span per database statement of a SQLAlchemy engine (:func:`trace_statements`).

Statements run through SQLAlchemy are seen by the engine's cursor events; the store's few
driver-level calls (the API key check, the one-statement signups) wrap each statement in
:func:`statement_span` themselves.

Attributes follow the database semantic conventions: ``db.system.name``,
``db.operation.name``, ``db.namespace`` and ``server.address``/``server.port`` (PostgreSQL),
``db.response.status_code`` (the SQLSTATE of a failure) and ``db.query.text``. The query text
never holds a bound parameter (the store binds every value), and :func:`sanitised_sql`
replaces any literal string or number in it by ``?`` as the conventions recommend, so a value
written into a statement by hand cannot reach a span either. The database password, the
parameters and driver error messages are never recorded.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine, ExceptionContext

from . import error_type, mark_error

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

_TRACERS: weakref.WeakKeyDictionary[Engine, Tracer] = weakref.WeakKeyDictionary()
_SPANS = "nc_statement_spans"  # Connection.info key: the spans of statements in flight
_UNTRACED: AbstractContextManager[None] = nullcontext()

#: A string literal (``''`` escapes a quote inside one).
_STRING_LITERAL = re.compile(r"'(?:[^']|'')*'")
#: A number standing alone (not part of a name such as ``e0_seq`` or a ``$1`` placeholder).
_NUMBER_LITERAL = re.compile(r"(?<![\w$.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
#: The first keyword of a statement, when it names a single operation.
_OPERATION = re.compile(r"\s*([A-Za-z]+)")
_OPERATIONS = frozenset(
    {
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
        "SET",
        "SHOW",
        "PRAGMA",
        "CREATE",
        "ALTER",
        "DROP",
        "LOCK",
        "VACUUM",
        "ANALYZE",
    }
)


def trace_statements(engine: Engine, tracer: Tracer) -> None:
    """Record a span on ``tracer`` for every statement ``engine`` runs from now on (and for
    the store's driver-level calls on it). Calling it again for the same engine changes
    nothing."""
    if engine in _TRACERS:
        return
    _TRACERS[engine] = tracer
    base = engine_attributes(engine)

    @event.listens_for(engine, "before_cursor_execute")
    def _before(
        conn: Connection,
        _cursor: Any,
        statement: str,
        parameters: Any,
        _context: Any,
        executemany: bool,
    ) -> None:
        attributes = {**base, **statement_attributes(statement)}
        if executemany and isinstance(parameters, (list, tuple)) and len(parameters) > 1:
            attributes["db.operation.batch.size"] = len(parameters)
        conn.info.setdefault(_SPANS, []).append(_start(tracer, attributes))

    @event.listens_for(engine, "after_cursor_execute")
    def _after(conn: Connection, *_args: Any) -> None:
        spans = conn.info.get(_SPANS)
        if spans:
            spans.pop().end()

    @event.listens_for(engine, "handle_error")
    def _failed(context: ExceptionContext) -> None:
        conn = context.connection
        spans = conn.info.get(_SPANS) if conn is not None else None
        if spans:
            current = spans.pop()
            _mark_failed(current, context.original_exception)
            current.end()


def statement_span(engine: Engine, sql: str) -> AbstractContextManager[object]:
    """A span around one driver-level statement ``sql`` run on a connection of ``engine``,
    when :func:`trace_statements` traces it; otherwise a context that does nothing."""
    tracer = _TRACERS.get(engine)
    if tracer is None:
        return _UNTRACED
    return _driver_statement(tracer, {**engine_attributes(engine), **statement_attributes(sql)})


@contextmanager
def _driver_statement(tracer: Tracer, attributes: dict[str, AttributeValue]) -> Iterator[None]:
    current = _start(tracer, attributes)
    try:
        yield
    except BaseException as exc:
        _mark_failed(current, exc)
        raise
    finally:
        current.end()


def _start(tracer: Tracer, attributes: dict[str, AttributeValue]) -> Span:
    from opentelemetry.trace import SpanKind

    name = str(attributes.get("db.operation.name") or attributes["db.system.name"])
    return tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)


def _mark_failed(current: Span, exc: BaseException) -> None:
    sqlstate = getattr(exc, "sqlstate", None)  # psycopg's errors carry the SQLSTATE
    if isinstance(sqlstate, str) and sqlstate:
        current.set_attribute("db.response.status_code", sqlstate)
    mark_error(current, error_type(exc))


def engine_attributes(engine: Engine) -> dict[str, AttributeValue]:
    """What every statement span of ``engine`` says about the database: its system and, for
    PostgreSQL, the database name, host and port (never the user or password)."""
    url = engine.url
    system = engine.dialect.name
    attributes: dict[str, AttributeValue] = {"db.system.name": system}
    if system == "postgresql":
        if url.database:
            attributes["db.namespace"] = url.database
        if url.host:  # none for a Unix socket
            attributes["server.address"] = url.host
            attributes["server.port"] = url.port or 5432
    return attributes


def statement_attributes(statement: str) -> dict[str, AttributeValue]:
    """``db.query.text`` (:func:`sanitised_sql`) and, when the statement is a single
    operation, ``db.operation.name``."""
    attributes: dict[str, AttributeValue] = {"db.query.text": sanitised_sql(statement)}
    match = _OPERATION.match(statement)
    if match and match.group(1).upper() in _OPERATIONS:
        attributes["db.operation.name"] = match.group(1).upper()
    return attributes


def sanitised_sql(statement: str) -> str:
    """``statement`` with every literal string and number replaced by ``?``."""
    return _NUMBER_LITERAL.sub("?", _STRING_LITERAL.sub("?", statement))
