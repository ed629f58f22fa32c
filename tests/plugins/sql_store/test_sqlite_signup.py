"""SQLite's signup outside a unit of work (``plugins/sql_store/fast/sqlite_signup.py``).

The conformance suite checks what ``SqlStorage.add_subscriber`` stores; these check how: it is
the built-in store's path on SQLite, all or nothing, a busy database is ``db_unavailable``
with nothing written, and the pooled connection goes back out of any transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event, exc, text

from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.fast.sqlite_signup import SqliteSignup
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.subscriber_helpers import signup_event


@pytest.fixture
def sqlite_storage(newsletter_storage: Any) -> BuiltinSqlStorage:
    if newsletter_storage.dialect != "sqlite":
        pytest.skip("SQLite only: PostgreSQL's signup is one statement (test_signup_insert.py)")
    assert isinstance(newsletter_storage, BuiltinSqlStorage)
    return newsletter_storage


def counts(storage: BuiltinSqlStorage) -> tuple[int, int]:
    with storage.engine.connect() as connection:
        row = connection.execute(
            text(
                "SELECT (SELECT count(*) FROM nc_subscribers),"
                " (SELECT count(*) FROM nc_outbox_events)"
            )
        ).one()
    return int(row[0]), int(row[1])


def test_it_is_the_built_in_stores_path_on_sqlite(sqlite_storage: BuiltinSqlStorage) -> None:
    assert isinstance(sqlite_storage._signup, SqliteSignup)


def test_a_failing_event_insert_leaves_no_subscriber(sqlite_storage: BuiltinSqlStorage) -> None:
    first = signup_event(0)
    assert sqlite_storage.add_subscriber(make_subscriber_data("one@example.org"), [first])
    duplicate = signup_event(1, event_id=first.event_id)  # event ids are unique
    with pytest.raises(exc.IntegrityError):
        sqlite_storage.add_subscriber(
            make_subscriber_data("two@example.org"), [signup_event(2), duplicate]
        )
    assert counts(sqlite_storage) == (1, 1)
    # The connection went back to the pool out of its transaction: the next signup commits.
    assert sqlite_storage.add_subscriber(
        make_subscriber_data("three@example.org"), [signup_event(3)]
    )
    assert counts(sqlite_storage) == (2, 2)


def test_the_connection_goes_back_out_of_any_transaction(sqlite_storage: BuiltinSqlStorage) -> None:
    sqlite_storage.engine.dispose()  # one pooled connection from here on
    assert sqlite_storage.add_subscriber(make_subscriber_data("a@example.org"), [signup_event()])
    assert (
        sqlite_storage.add_subscriber(make_subscriber_data("a@example.org"), [signup_event()])
        is None
    )
    raw = sqlite_storage.engine.raw_connection()
    try:
        assert sqlite_storage.engine.pool.checkedout() == 1
        assert isinstance(raw.dbapi_connection, sqlite3.Connection)
        assert raw.dbapi_connection.in_transaction is False
    finally:
        raw.close()


@pytest.fixture
def impatient(sqlite_storage: BuiltinSqlStorage) -> Iterator[BuiltinSqlStorage]:
    """A second store on the same file that waits only 0.1 s for the write lock."""
    engine = make_engine(sqlite_storage.engine.url.render_as_string(hide_password=False))

    @event.listens_for(engine, "connect")
    def _impatient(dbapi_connection: Any, _record: Any) -> None:  # after the store's own
        dbapi_connection.execute("PRAGMA busy_timeout=100")

    made = BuiltinSqlStorage(engine)
    yield made
    made.close()


def test_a_busy_database_is_unavailable_and_nothing_is_written(
    sqlite_storage: BuiltinSqlStorage, impatient: BuiltinSqlStorage
) -> None:
    """Another writer holds the write lock: the signup waits (the busy timeout), then is
    refused with ``db_unavailable``, nothing written, as a unit of work's would be."""
    with sqlite_storage.transaction() as uow:  # BEGIN IMMEDIATE: the write lock
        uow.connection.execute(text("SELECT 1"))
        with pytest.raises(DbUnavailable):
            impatient.add_subscriber(make_subscriber_data("blocked@example.org"), [signup_event()])
    assert counts(sqlite_storage) == (0, 0)
    assert impatient.add_subscriber(make_subscriber_data("later@example.org"), [signup_event()])
    assert counts(sqlite_storage) == (1, 1)
