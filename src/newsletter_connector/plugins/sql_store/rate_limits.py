"""The SQL store's rate-limit counters: one row per key, one atomic upsert per hit.

``INSERT ... ON CONFLICT (key) DO UPDATE`` takes the row lock of an existing counter, so
concurrent hits on one key (from any worker) serialise on that row and none is lost; a counter
whose window has ended restarts in the same statement.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, case, delete, select
from sqlalchemy.dialects import mysql, postgresql, sqlite

from .engine import is_mysql
from .repository import SqlRepository
from .tables import rate_limit_counters as counters


def _upsert(dialect: Any) -> Any:
    statement = dialect.insert(counters).values(
        key=bindparam("key"), hits=bindparam("amount"), expires_at=bindparam("expires_at")
    )
    expired = counters.c.expires_at <= bindparam("now")
    return statement.on_conflict_do_update(
        index_elements=[counters.c.key],
        set_={
            "hits": case(
                (expired, statement.excluded.hits), else_=counters.c.hits + statement.excluded.hits
            ),
            "expires_at": case(
                (expired, statement.excluded.expires_at), else_=counters.c.expires_at
            ),
        },
    ).returning(counters.c.hits)


_HIT = {"postgresql": _upsert(postgresql), "sqlite": _upsert(sqlite)}
# MySQL and MariaDB: no RETURNING, so the count is read back (the row is this transaction's
# now). Each assignment sees the ones before it: ``hits`` reads the old expiry, then
# ``expires_at`` is set.
_HIT_MYSQL = mysql.insert(counters).values(
    key=bindparam("key"), hits=bindparam("amount"), expires_at=bindparam("expires_at")
)
_HIT_MYSQL = _HIT_MYSQL.on_duplicate_key_update(
    hits=case(
        (counters.c.expires_at <= bindparam("now"), _HIT_MYSQL.inserted.hits),
        else_=counters.c.hits + _HIT_MYSQL.inserted.hits,
    ),
    expires_at=case(
        (counters.c.expires_at <= bindparam("now"), _HIT_MYSQL.inserted.expires_at),
        else_=counters.c.expires_at,
    ),
)
_HITS = select(counters.c.hits).where(counters.c.key == bindparam("key"))
_PEEK = select(counters.c.hits, counters.c.expires_at).where(
    counters.c.key == bindparam("key"), counters.c.expires_at > bindparam("now")
)

# PostgreSQL: rows another transaction holds (a window being restarted) are skipped, not waited
# for, so two workers each restarting a window and pruning cannot deadlock. SQLite renders no
# FOR UPDATE: its writers take turns anyway.
_EXPIRED = (
    select(counters.c.key)
    .where(counters.c.expires_at <= bindparam("expired_by"))
    .with_for_update(skip_locked=True)
)
_PRUNE = delete(counters).where(counters.c.key.in_(_EXPIRED.scalar_subquery()))


class SqlRateLimits(SqlRepository):
    """Fixed-window hit counters by key, shared by every process using the store. A counter
    lives from its first hit until its ``expires_at``; from then on a hit starts it anew and
    reads see none. Keys are opaque (at most 200 characters; a keyed hash, never an address).

    Kept in ``nc_rate_limit_counters``."""

    def hit(self, key: str, *, now: datetime, expires_at: datetime, amount: int = 1) -> int:
        """Add ``amount`` to the counter of ``key`` and return its new count, atomically: a
        missing or expired counter starts at ``amount`` and expires at ``expires_at``; a live
        one keeps its expiry. Concurrent hits on one key never lose a count."""
        params = {"key": key, "amount": amount, "expires_at": expires_at, "now": now}
        if is_mysql(self.connection.dialect.name):
            self.connection.execute(_HIT_MYSQL, params)
            return int(self.connection.execute(_HITS, params).scalar_one())
        statement = _HIT[self.connection.dialect.name]
        return int(self.connection.execute(statement, params).scalar_one())

    def peek(self, key: str, *, now: datetime) -> tuple[int, datetime | None]:
        """The live counter of ``key`` as ``(count, expires_at)``; ``(0, None)`` if none."""
        row = self.connection.execute(_PEEK, {"key": key, "now": now}).first()
        return (int(row[0]), row[1]) if row else (0, None)

    def clear(self, key: str) -> None:
        """Forget the counter of ``key``."""
        self.connection.execute(delete(counters).where(counters.c.key == key))

    def prune(self, *, expired_by: datetime) -> int:
        """Delete the counters expired at ``expired_by``; how many. Never waits for a counter
        another transaction is writing (a later prune takes it)."""
        if is_mysql(self.connection.dialect.name):
            # MySQL refuses a DELETE whose subquery reads the same table (error 1093).
            keys = self.connection.execute(_EXPIRED, {"expired_by": expired_by}).scalars().all()
            if not keys:
                return 0
            deleted = self.connection.execute(delete(counters).where(counters.c.key.in_(keys)))
            return int(deleted.rowcount)
        result = self.connection.execute(_PRUNE, {"expired_by": expired_by})
        return int(result.rowcount)
