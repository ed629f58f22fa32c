"""Short reads: the database calls a request makes before it does anything else (the API key
check, one record by its link token, the admin area's session, readiness), each of which
answers in milliseconds from a healthy database.

The service opens :func:`short_reads` around them; a storage backend that can bound a wait per
call (the built-in SQL store: ``db_short_reply_timeout``) gives up on a database that does not
answer after that short deadline rather than the one sized for its longest statement, so a
hung database answers 503 within seconds. Other backends may ignore it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_SHORT: ContextVar[bool] = ContextVar("newsletter_connector_short_reads", default=False)


@contextmanager
def short_reads() -> Iterator[None]:
    """Inside the block (in this thread or task), every database call is a short read."""
    token = _SHORT.set(True)
    try:
        yield
    finally:
        _SHORT.reset(token)


def in_short_reads() -> bool:
    """Whether the caller is inside :func:`short_reads`."""
    return _SHORT.get()
