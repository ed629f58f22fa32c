"""PostgreSQL connections that give up on a server that stops answering.

A stopped server whose kernel still acknowledges TCP fires no server-side timeout, so only the
client can bound the wait. Every round trip of a :class:`ReplyBoundConnection` (and every
:func:`wait_for_reply` of :mod:`.dedicated_read`'s libpq path) waits at most its reply timeout; past
it the connection is closed and :class:`NoReply` (a ``psycopg.OperationalError``) raised, which
SQLAlchemy counts as a disconnect (the pool is discarded, the caller answers ``db_unavailable``).
Inside :func:`~newsletter_connector.short_reads.short_reads` the bound is the connection's shorter
:attr:`ReplyBoundConnection.short_reply_timeout`. See docs/contributing/decisions/performance.md,
"Every wait on the database is bounded" and "Short reads have a deadline of their own".
"""

from __future__ import annotations

import math
import select
import time
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg import pq

from ...short_reads import in_short_reads

if TYPE_CHECKING:
    from psycopg.abc import PQGen

RV = TypeVar("RV")


class NoReply(psycopg.OperationalError):
    """The server did not reply within the bound: it is hung, so a new connection would wait
    as long (the connection is closed)."""


class ReplyBoundConnection(psycopg.Connection[Any]):
    """A psycopg connection whose round trips wait at most :attr:`reply_timeout` seconds
    (``None``: as long as it takes) for the server's reply, and inside
    :func:`~newsletter_connector.short_reads.short_reads` at most
    :attr:`short_reply_timeout`."""

    #: Seconds a round trip waits for the server before the connection is given up.
    reply_timeout: float | None = None
    #: The bound of a round trip inside ``short_reads()`` (``None``: :attr:`reply_timeout`).
    short_reply_timeout: float | None = None

    def current_reply_timeout(self) -> float | None:
        """The bound a round trip started now has."""
        bound, short = self.reply_timeout, self.short_reply_timeout
        if bound is None or short is None or not in_short_reads():
            return bound
        return min(bound, short)

    def wait(
        self, gen: PQGen[RV], interval: float | None = None, timeout: float | None = None
    ) -> RV:
        """psycopg's wait for every round trip, bounded by :attr:`reply_timeout` unless the
        caller gives its own ``timeout``.

        :raises psycopg.OperationalError: no reply in time (the connection is closed), or any
            failure psycopg reports.
        """
        bound = self.current_reply_timeout() if timeout is None else timeout
        try:
            if interval is None:
                return super().wait(gen, timeout=bound)
            return super().wait(gen, interval=interval, timeout=bound)
        except psycopg.OperationalError:
            if timeout is not None or bound is None or not _in_flight(self.pgconn):
                raise
            # The connection's state is unknown, and a cancel would wait on the same server.
            self.pgconn.finish()
            raise NoReply(no_reply_message(bound)) from None


def _in_flight(pgconn: pq.abc.PGconn) -> bool:
    return pgconn.transaction_status == pq.TransactionStatus.ACTIVE


def no_reply_message(seconds: float) -> str:
    """The error text for a server that did not answer within ``seconds``."""
    return f"the database server did not reply within {seconds:g} s"


def reply_timeout(connection: psycopg.Connection[Any]) -> float | None:
    """How long a round trip on ``connection`` may wait for the server (``None``: unbounded,
    a connection not made by this store's engine)."""
    if isinstance(connection, ReplyBoundConnection):
        return connection.current_reply_timeout()
    return None


def reply_deadline(connection: psycopg.Connection[Any]) -> float | None:
    """The ``time.monotonic()`` by which a request sent on ``connection`` now must have had
    its reply (``None``: no bound)."""
    bound = reply_timeout(connection)
    return None if bound is None else time.monotonic() + bound


def wait_for_reply(connection: psycopg.Connection[Any], deadline: float | None) -> None:
    """After a ``send_*`` on ``connection.pgconn``: wait until ``pgconn.get_result()`` can
    answer without waiting, at most until ``deadline`` (from :func:`reply_deadline`).

    :raises NoReply: no reply in time (the connection is now closed).
    :raises psycopg.OperationalError: the connection failed.
    """
    pgconn = connection.pgconn
    poller: select.poll | None = None
    while pgconn.is_busy():
        if poller is None:
            poller = select.poll()
            poller.register(pgconn.socket, select.POLLIN)
        if deadline is None:
            poller.poll()
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(math.ceil(remaining * 1000)):
                pgconn.finish()
                raise NoReply(no_reply_message(reply_timeout(connection) or 0))
        pgconn.consume_input()
