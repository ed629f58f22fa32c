"""A signup on SQLite on a pooled DB-API connection, outside a unit of work (bench: signup_cpu).

One ``BEGIN IMMEDIATE`` transaction: when a suppression key is given, a look-up of it (found:
nothing is written); the subscriber insert (``ON CONFLICT (email) DO NOTHING RETURNING id``),
then, only when it inserted, each event in order, and ``COMMIT``; anything raised on the way
rolls all of it back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Engine

from ....storage.outbox_records import NewEvent
from ....storage.records import SubscriberData, SubscriberRecord
from ....tracing.statements import statement_span
from ..outbox import SQLITE_ENQUEUE, event_columns
from ..subscribers import sqlite_insert_subscriber_statement, subscriber_columns, subscriber_fields
from ..tables import suppressions
from .pooled_statement import DriverStatement, wrapped_driver_error

SUPPRESSED = select(suppressions.c.email_hmac).where(suppressions.c.email_hmac == bindparam("key"))


class SqliteSignup:
    """Adds a subscriber with its events in one ``BEGIN IMMEDIATE`` transaction (SQLite only)."""

    def __init__(self, engine: Engine) -> None:
        if engine.dialect.name != "sqlite":
            raise ValueError("this signup runs on SQLite's own connections")
        self.engine = engine
        self._insert = DriverStatement(sqlite_insert_subscriber_statement(), engine.dialect)
        self._enqueue = DriverStatement(SQLITE_ENQUEUE, engine.dialect)
        self._suppressed = DriverStatement(SUPPRESSED, engine.dialect)

    def handles(self, events: Sequence[NewEvent]) -> bool:
        """Whether :meth:`add` takes these events (any number)."""
        return True

    def add(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        """As ``SqlStorage.add_subscriber``.

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        insert, enqueue = self._insert, self._enqueue
        subscriber = insert.parameters(subscriber_columns(data))
        queued = [enqueue.parameters(event_columns(event)) for event in events]
        sql = insert.sql
        try:
            connection = self.engine.raw_connection()
        except sqlite3.Error as error:  # the pool does not wrap a failed connect
            raise wrapped_driver_error(self.engine, sql, error, lost=False) from error
        try:
            dbapi_connection: Any = connection.dbapi_connection
            cursor = connection.cursor()
            try:
                self._execute(cursor, "BEGIN IMMEDIATE")
                try:
                    row = None
                    if unless_suppressed is not None:
                        sql = self._suppressed.sql
                        self._execute(
                            cursor, sql, self._suppressed.parameters({"key": unless_suppressed})
                        )
                        suppressed = cursor.fetchone() is not None
                        sql = insert.sql
                    if unless_suppressed is None or not suppressed:
                        self._execute(cursor, sql, subscriber)
                        row = cursor.fetchone()
                    if row is not None:
                        sql = enqueue.sql
                        for values in queued:
                            self._execute(cursor, sql, values)
                    self._execute(cursor, "COMMIT")
                except BaseException:
                    if dbapi_connection.in_transaction:
                        dbapi_connection.rollback()
                    raise
            finally:
                cursor.close()
        except sqlite3.Error as error:
            raise wrapped_driver_error(self.engine, sql, error, lost=False) from error
        finally:
            connection.close()  # back to the pool
        if row is None:
            return None  # the address is already stored, or suppressed; nothing was written
        return SubscriberRecord(id=int(row[0]), **subscriber_fields(data))

    def _execute(self, cursor: Any, sql: str, parameters: Any = ()) -> None:
        """Run one statement on ``cursor`` (in a span when the engine is traced)."""
        with statement_span(self.engine, sql):
            cursor.execute(sql, parameters)
