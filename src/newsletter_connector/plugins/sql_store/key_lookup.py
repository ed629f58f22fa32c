"""The per-request API key check on a pooled DB-API connection (issue 10).

Every authenticated request looks its key up. Through a unit of work (a SQLAlchemy
``Connection``, its transaction and statement execution) the look-up cost ~85 µs of Python
per request; the same statement, compiled once and run on a pooled DB-API cursor, ~25 µs.
On PostgreSQL that was the difference between `/status` at 0.44x and at 0.5x of a bare app.

The statement is SQLAlchemy's own (compiled for the engine's dialect, result columns run
through their types' result processors), and the connection comes from the engine's pool (so
the idle ping applies). Driver errors are translated as the unit of work's are: a lost
connection is discarded along with the rest of the pool, and the request answers 503.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, exc, select
from sqlalchemy.engine import Engine

from ...storage import ApiKeyRecord
from .tables import api_keys

_ACTIVE_KEY = select(
    api_keys.c.id, api_keys.c.label, api_keys.c.key_prefix, api_keys.c.created_at
).where(api_keys.c.key_digest == bindparam("digest"), api_keys.c.revoked_at.is_(None))


def _unchanged(value: Any) -> Any:
    return value


class ActiveKeyLookup:
    """Finds the unrevoked key with a digest, on a pooled connection of ``engine``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        dialect = engine.dialect
        compiled = _ACTIVE_KEY.compile(dialect=dialect)
        self._sql = str(compiled)
        self._positional = dialect.positional
        self._postgres = dialect.name == "postgresql"
        self._names = compiled.positiontup or []
        created_at_type = api_keys.c.created_at.type.dialect_impl(dialect)
        self._created_at: Callable[[Any], Any] = (
            created_at_type.result_processor(dialect, None) or _unchanged
        )

    def find(self, key_digest: str) -> ApiKeyRecord | None:
        """The active key with this digest, or ``None``.

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        params: Any = {"digest": key_digest}
        if self._positional:
            params = tuple(params[name] for name in self._names)
        dbapi_error = self.engine.dialect.loaded_dbapi.Error
        try:
            connection = self.engine.raw_connection()
        except dbapi_error as error:  # the pool does not wrap a failed connect
            raise self._wrapped(error, lost=False) from error
        # One statement needs no transaction: PostgreSQL runs it in autocommit (no BEGIN or
        # COMMIT round trip); SQLite's connections never open one implicitly (engine.py).
        autocommit = self._postgres
        try:
            if autocommit:
                connection.dbapi_connection.autocommit = True  # type: ignore[union-attr]
            cursor = connection.cursor()
            try:
                cursor.execute(self._sql, params)
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
        if row is None:
            return None
        key_id, label, key_prefix, created_at = row
        return ApiKeyRecord(
            id=int(key_id),
            label=label,
            key_prefix=key_prefix,
            created_at=self._created_at(created_at),
            revoked_at=None,
        )

    def _wrapped(self, error: Exception, *, lost: bool) -> BaseException:
        """``error`` as SQLAlchemy would raise it from a ``Connection`` (its parameters hidden)."""
        return exc.DBAPIError.instance(
            self._sql,
            None,
            error,
            self.engine.dialect.loaded_dbapi.Error,
            hide_parameters=True,
            connection_invalidated=lost,
            dialect=self.engine.dialect,
        )
