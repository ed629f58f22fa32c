"""The ``limits`` package's storage on the service's database (``uow.rate_limits``), so every
worker and process on the same database counts the same hits. Times come from the service clock.

A request's counter is the first database call of a public form POST and of
``/analytics/collect``, so its single-row statements (the hit is one upsert) run inside
:func:`~newsletter_connector.short_reads.short_reads`: one keyed row answers in milliseconds
from a healthy database, and a hung one then costs the request ``db_short_reply_timeout``
rather than ``db_reply_timeout``.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from limits.storage import Storage

from ..errors import DbUnavailable
from ..service.context import ServiceContext
from ..short_reads import short_reads


def epoch_seconds(moment: datetime) -> float:
    """A naive UTC time as seconds since the epoch (what ``limits`` uses for expiries)."""
    return moment.replace(tzinfo=timezone.utc).timestamp()


class DatabaseCounters(Storage):
    """Fixed-window counters in ``uow.rate_limits`` (no moving-window support)."""

    def __init__(self, context: ServiceContext) -> None:
        super().__init__()
        self.context = context

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return DbUnavailable

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        """Count ``amount`` hits on ``key``; a hit opening a new window (of ``expiry`` seconds)
        also deletes every ended one."""
        now = self.context.clock()
        with short_reads(), self.context.storage.transaction() as uow:
            count = uow.rate_limits.hit(
                key, now=now, expires_at=now + timedelta(seconds=expiry), amount=amount
            )
        if count == amount:  # after the hit committed: the prune holds no counter of its own
            # Not a short read: it may delete many ended windows, and it only runs once the
            # database has just answered the hit.
            with self.context.storage.transaction() as uow:
                uow.rate_limits.prune(expired_by=now)
        return count

    def get(self, key: str) -> int:
        with short_reads(), self.context.storage.transaction(write=False) as uow:
            return uow.rate_limits.peek(key, now=self.context.clock())[0]

    def get_expiry(self, key: str) -> float:
        now = self.context.clock()
        with short_reads(), self.context.storage.transaction(write=False) as uow:
            expires_at = uow.rate_limits.peek(key, now=now)[1]
        return epoch_seconds(expires_at or now)

    def check(self) -> bool:
        try:
            self.context.storage.check_ready()
        except Exception:
            return False
        return True

    def reset(self) -> int | None:
        with self.context.storage.transaction() as uow:
            return uow.rate_limits.prune(expired_by=datetime.max)

    def clear(self, key: str) -> None:
        with self.context.storage.transaction() as uow:
            uow.rate_limits.clear(key)


def seconds_until(expiry: float, now: datetime) -> int:
    """Whole seconds (at least 1) from ``now`` until the epoch time ``expiry``."""
    return max(1, math.ceil(expiry - epoch_seconds(now)))
