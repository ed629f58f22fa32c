"""The retry ladder (docs/delivery.md, "Requests and the retry ladder"): after a failed attempt,
when to try again."""

from __future__ import annotations

from datetime import datetime, timedelta

#: Delays after the 1st, 2nd, 3rd and 4th failed attempt; every later one waits :data:`EVERY_DAY`.
LADDER = (timedelta(minutes=1), timedelta(minutes=10), timedelta(hours=1), timedelta(hours=6))
EVERY_DAY = timedelta(hours=24)
#: After this many failed attempts a batch is marked failed (kept, visible, replayable).
MAX_ATTEMPTS = 20


def retry_delay(attempts: int) -> timedelta:
    """The wait after ``attempts`` failed attempts (``attempts`` >= 1)."""
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    return LADDER[attempts - 1] if attempts <= len(LADDER) else EVERY_DAY


def next_attempt_at(attempts: int, failed_at: datetime) -> datetime | None:
    """When to retry after the ``attempts``-th failure at ``failed_at``; ``None`` means give up."""
    if attempts >= MAX_ATTEMPTS:
        return None
    return failed_at + retry_delay(attempts)
