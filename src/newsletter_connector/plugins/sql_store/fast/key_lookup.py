"""The per-request API key check, run outside a unit of work (bench: status_overhead): on
PostgreSQL with psycopg 3 on a connection of each thread's own (:mod:`.dedicated_read`),
otherwise (and behind a transaction pooler, where its prepared statement would be unknown on
the next server connection) on a pooled one (:mod:`.pooled_statement`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Engine

from ....storage.access_records import ApiKeyRecord
from ..engine import behind_transaction_pooler, idle_ping_seconds
from ..tables import api_keys
from .pooled_statement import PooledStatement

if TYPE_CHECKING:
    from .dedicated_read import DedicatedReadStatement

_ACTIVE_KEY = select(
    api_keys.c.id,
    api_keys.c.label,
    api_keys.c.key_prefix,
    api_keys.c.created_at,
    api_keys.c.last_used_on,
).where(api_keys.c.key_digest == bindparam("digest"), api_keys.c.revoked_at.is_(None))


def _unchanged(value: Any) -> Any:
    return value


def _result_processor(engine: Engine, column: Any) -> Callable[[Any], Any]:
    """``column``'s result processor for ``engine``'s dialect (identity when it has none)."""
    dialect = engine.dialect
    return column.type.dialect_impl(dialect).result_processor(dialect, None) or _unchanged


def green_threads() -> bool:
    """Whether gevent or eventlet has patched ``threading``: then each greenlet is a "thread",
    and a connection per thread would be a connection per request in flight."""
    gevent = sys.modules.get("gevent.monkey")
    if gevent is not None and gevent.is_module_patched("threading"):
        return True
    eventlet = sys.modules.get("eventlet.patcher")
    return eventlet is not None and bool(eventlet.is_monkey_patched("thread"))


class ActiveKeyLookup:
    """Finds the unrevoked key with a digest: on PostgreSQL through psycopg 3, on a connection
    of each thread's own (unless the threads are green or a transaction pooler is in between);
    otherwise on a pooled connection of ``engine``. :meth:`close` when done with the engine."""

    def __init__(self, engine: Engine) -> None:
        self._statement: PooledStatement | DedicatedReadStatement
        if (
            engine.dialect.name == "postgresql"
            and engine.dialect.driver == "psycopg"
            and not green_threads()
            and not behind_transaction_pooler(engine)
        ):
            # Imported only here: it needs psycopg, which only the postgres extra installs.
            from .dedicated_read import DedicatedReadStatement

            self._statement = DedicatedReadStatement(
                engine, _ACTIVE_KEY, idle_ping_seconds=idle_ping_seconds(engine)
            )
        else:
            self._statement = PooledStatement(engine, _ACTIVE_KEY)
        self._created_at = _result_processor(engine, api_keys.c.created_at)
        self._last_used_on = _result_processor(engine, api_keys.c.last_used_on)

    def find(self, key_digest: str) -> ApiKeyRecord | None:
        """The active key with this digest, or ``None``.

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        row = self._statement.first_row({"digest": key_digest})
        if row is None:
            return None
        key_id, label, key_prefix, created_at, last_used_on = row
        return ApiKeyRecord(
            id=int(key_id),
            label=label,
            key_prefix=key_prefix,
            created_at=self._created_at(created_at),
            revoked_at=None,
            last_used_on=self._last_used_on(last_used_on),
        )

    def close(self) -> None:
        """Close the connections held for the look-up (pooled ones go with the engine)."""
        if not isinstance(self._statement, PooledStatement):
            self._statement.close()
