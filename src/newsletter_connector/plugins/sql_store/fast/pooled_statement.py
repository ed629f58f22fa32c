"""One SQLAlchemy statement, compiled once, run on a pooled DB-API connection
(bench: status_overhead, signup_cpu).

Parameters go through their types' bind processors. The statement runs alone: in autocommit
on PostgreSQL, and on SQLite, whose connections never begin a transaction implicitly
(engine.py). Driver errors are raised as a ``Connection`` would (parameters hidden); a lost
connection discards the pool and is translated to ``DbUnavailable``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from sqlalchemy import exc
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement

from ....tracing.statements import statement_span


class DriverStatement:
    """``statement`` compiled once for ``dialect``, in the driver's own terms: :attr:`sql` and
    :meth:`parameters`, for a DB-API cursor or ``Connection.exec_driver_sql``."""

    def __init__(self, statement: ClauseElement, dialect: Dialect) -> None:
        compiled = cast(SQLCompiler, statement.compile(dialect=dialect))
        self.sql = str(compiled)
        self._names = list(compiled.positiontup or []) if dialect.positional else None
        processors: dict[str, Callable[[Any], Any]] = {}
        fixed: dict[str, Any] = {}
        for bind, name in compiled.bind_names.items():
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if processor is not None:
                processors[name] = processor
            if not bind.required:  # a value built into the statement (a lock id, OFFSET 0)
                fixed[name] = bind.effective_value
        self._processors = processors
        self._fixed = fixed

    def parameters(self, params: Mapping[str, Any]) -> Any:
        """``params`` (by bound parameter name; the statement's own values added) through
        their types' bind processors, in the driver's parameter style."""
        values: Any = {**self._fixed, **params}
        for name, processor in self._processors.items():
            values[name] = processor(values[name])
        if self._names is not None:
            values = tuple(values[name] for name in self._names)
        return values


class PooledStatement:
    """``statement`` compiled for ``engine``; :meth:`first_row` runs it on a pooled connection.

    Each run gives a value to every bound parameter the statement does not hold a value for.
    """

    def __init__(self, engine: Engine, statement: ClauseElement) -> None:
        self.engine = engine
        self._driver = DriverStatement(statement, engine.dialect)
        self.sql = self._driver.sql
        self._autocommit = engine.dialect.name == "postgresql"

    def first_row(self, params: Mapping[str, Any]) -> Any | None:
        """Run the statement (one that returns rows: a ``SELECT`` or ``... RETURNING``) with
        ``params`` (by bound parameter name); its first row, or ``None`` when it has none.

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        values = self._driver.parameters(params)
        dbapi_error = self.engine.dialect.loaded_dbapi.Error
        try:
            connection = self.engine.raw_connection()
        except dbapi_error as error:  # the pool does not wrap a failed connect
            raise self._wrapped(error, lost=False) from error
        autocommit = self._autocommit
        try:
            if autocommit:
                connection.dbapi_connection.autocommit = True  # type: ignore[union-attr]
            cursor = connection.cursor()
            try:
                with statement_span(self.engine, self.sql):
                    cursor.execute(self.sql, values)
                    row = cursor.fetchone()
            finally:
                cursor.close()
        except dbapi_error as error:
            lost = self.engine.dialect.is_disconnect(error, connection.dbapi_connection, None)
            if lost:
                connection.invalidate(error)
                self.engine.dispose(close=False)  # the other pooled ones died with it
            raise self._wrapped(error, lost=lost) from error
        finally:
            raw = connection.dbapi_connection
            if autocommit and raw is not None and not raw.closed:
                raw.autocommit = False  # as the pool lent it
            connection.close()  # back to the pool
        return row

    def _wrapped(self, error: Exception, *, lost: bool) -> BaseException:
        return wrapped_driver_error(self.engine, self.sql, error, lost=lost)


def wrapped_driver_error(
    engine: Engine, sql: str, error: Exception, *, lost: bool
) -> BaseException:
    """The driver's ``error`` from running ``sql`` as SQLAlchemy would raise it from a
    ``Connection`` of ``engine`` (its parameters hidden; ``lost``: the connection died)."""
    return exc.DBAPIError.instance(
        sql,
        None,
        error,
        engine.dialect.loaded_dbapi.Error,
        hide_parameters=True,
        connection_invalidated=lost,
        dialect=engine.dialect,
    )
