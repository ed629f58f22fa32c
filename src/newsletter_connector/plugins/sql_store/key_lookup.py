"""The per-request API key check on a pooled DB-API connection (issue 10).

Every authenticated request looks its key up. Through a unit of work (a SQLAlchemy
``Connection``, its transaction and statement execution) the look-up cost ~85 µs of Python
per request; the same statement, compiled once and run on a pooled DB-API cursor
(:mod:`.pooled_statement`), ~25 µs. On PostgreSQL that was the difference between `/status` at
0.44x and at 0.5x of a bare app. Result columns run through their types' result processors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Engine

from ...storage import ApiKeyRecord
from .pooled_statement import PooledStatement
from .tables import api_keys

_ACTIVE_KEY = select(
    api_keys.c.id, api_keys.c.label, api_keys.c.key_prefix, api_keys.c.created_at
).where(api_keys.c.key_digest == bindparam("digest"), api_keys.c.revoked_at.is_(None))


def _unchanged(value: Any) -> Any:
    return value


class ActiveKeyLookup:
    """Finds the unrevoked key with a digest, on a pooled connection of ``engine``."""

    def __init__(self, engine: Engine) -> None:
        self._statement = PooledStatement(engine, _ACTIVE_KEY)
        dialect = engine.dialect
        created_at_type = api_keys.c.created_at.type.dialect_impl(dialect)
        self._created_at: Callable[[Any], Any] = (
            created_at_type.result_processor(dialect, None) or _unchanged
        )

    def find(self, key_digest: str) -> ApiKeyRecord | None:
        """The active key with this digest, or ``None``.

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        row = self._statement.first_row({"digest": key_digest})
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
