"""Read statements shared between two PostgreSQL connections (bench: rollups).

A helper thread on a second pooled connection takes statements from the same list as the caller.
Only a PostgreSQL connection in autocommit shares (each statement is its own snapshot there, so
another connection sees exactly the same): a read-only unit of work. A write transaction, SQLite and
single-connection pools keep one connection. The caller never waits for the helper's connection; an
error the helper met is raised in the caller, after the helper has let go of its connection. See
docs/contributing/decisions/performance.md, "A PostgreSQL rollup reads on two connections".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from sqlalchemy.engine import Connection
from sqlalchemy.pool import AssertionPool, SingletonThreadPool, StaticPool
from sqlalchemy.sql import Executable

from ..reads import Rows, read_in_turn

log = logging.getLogger(__name__)

#: Pools that cannot lend a second connection to another thread.
_SINGLE_CONNECTION_POOLS = (StaticPool, SingletonThreadPool, AssertionPool)


def shares_reads(connection: Connection) -> bool:
    """Whether :func:`read_all` shares ``connection``'s statements with a second connection."""
    return (
        connection.dialect.name == "postgresql"
        and connection.get_execution_options().get("isolation_level") == "AUTOCOMMIT"
        and not isinstance(connection.engine.pool, _SINGLE_CONNECTION_POOLS)
    )


def read_all(connection: Connection, statements: Sequence[Executable]) -> list[Rows]:
    """:func:`..reads.read_in_turn`'s rows, the statements shared with a second pooled
    connection when :func:`shares_reads` (a :data:`..reads.ReadAll`)."""
    if len(statements) < 2 or not shares_reads(connection):
        return read_in_turn(connection, statements)
    reads = _SharedReads(statements)
    helper = threading.Thread(target=reads.help, args=(connection,), daemon=True)
    helper.start()
    try:
        while (index := reads.take(helper=False)) is not None:
            reads.results[index] = _rows(connection, statements[index])
    finally:
        reads.wait_for_helper()
    if reads.error is not None:
        raise reads.error
    return reads.results


def _rows(connection: Connection, statement: Executable) -> Rows:
    return connection.execute(statement).mappings().all()


class _SharedReads:
    """The statements, who has taken which, and what the helper read."""

    def __init__(self, statements: Sequence[Executable]) -> None:
        self.statements = statements
        self.results: list[Rows] = [()] * len(statements)
        self.error: BaseException | None = None
        self._next = 0
        self._helper_busy = False
        self._changed = threading.Condition()

    def take(self, *, helper: bool) -> int | None:
        """The next statement's index, or ``None`` when all are taken (or one failed)."""
        with self._changed:
            if self._next == len(self.statements) or self.error is not None:
                return None
            index = self._next
            self._next += 1
            if helper:
                self._helper_busy = True
            return index

    def wait_for_helper(self) -> None:
        """Take nothing more, and wait until the helper has finished the statement it holds."""
        with self._changed:
            self._next = len(self.statements)
            while self._helper_busy:
                self._changed.wait()

    def help(self, connection: Connection) -> None:
        """The helper thread: a second connection of ``connection``'s engine, in autocommit,
        taking statements until none is left."""
        try:
            with connection.engine.connect() as own:
                own = own.execution_options(isolation_level="AUTOCOMMIT")
                while (index := self.take(helper=True)) is not None:
                    self.results[index] = _rows(own, self.statements[index])
                    self._done()
        except BaseException as error:  # the connection is closed (or invalidated) by now
            if self._helper_busy:  # only this thread sets it: a statement of ours failed
                self._done(error=error)
            else:  # no second connection: the caller has run (or runs) everything
                log.debug("no second connection for shared reads", exc_info=True)

    def _done(self, error: BaseException | None = None) -> None:
        with self._changed:
            if error is not None:
                self.error = error
            self._helper_busy = False
            self._changed.notify_all()
