"""PostgreSQL's one-statement signup (``plugins/sql_store/fast/signup_insert.py``).

The conformance suite checks what ``SqlStorage.add_subscriber`` stores; these check how: both
inserts enter their commit horizons before drawing ids (a walk barrier held elsewhere stops
the statement before any id is drawn), the statement is all or nothing, and it runs in
autocommit on a pooled connection handed back as the pool lent it.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import exc, text
from sqlalchemy.engine import Connection

from newsletter_connector.plugins.sql_store.outbox_claims import OUTBOX_LOCK_ID
from newsletter_connector.plugins.sql_store.subscribers import SIGNUP_LOCK_ID
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.subscriber_helpers import signup_event

WAIT = 10.0  # seconds: far above any honest wait here, so only a real block times out


@pytest.fixture
def admin(server_storage: Any) -> Iterator[Connection]:
    """A connection of its own, in autocommit (session advisory locks, sequence reads)."""
    with server_storage.engine.connect() as connection:
        yield connection.execution_options(isolation_level="AUTOCOMMIT")


def drawn(admin: Connection) -> tuple[int, int]:
    """How many subscriber ids and outbox seqs have been drawn from their sequences."""
    row = admin.execute(
        text(
            "SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END"
            " FROM nc_subscribers_id_seq),"
            " (SELECT CASE WHEN is_called THEN last_value ELSE 0 END"
            " FROM nc_outbox_events_seq_seq)"
        )
    ).one()
    return int(row[0]), int(row[1])


@pytest.mark.parametrize("lock", [SIGNUP_LOCK_ID, OUTBOX_LOCK_ID], ids=["subscribers", "outbox"])
def test_each_insert_enters_its_horizon_before_drawing_its_id(
    postgres_storage: Any, admin: Connection, lock: int
) -> None:
    before = drawn(admin)
    admin.execute(text("SELECT pg_advisory_lock(:lock)"), {"lock": lock})  # a walk's barrier
    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            added = pool.submit(
                postgres_storage.add_subscriber,
                make_subscriber_data("held@example.org"),
                [signup_event()],
            )
            with pytest.raises(TimeoutError):
                added.result(timeout=0.5)  # waits for the barrier
            subscribers_drawn, seqs_drawn = drawn(admin)
            assert seqs_drawn == before[1]  # no event seq drawn while the barrier is up
            if lock == SIGNUP_LOCK_ID:
                assert subscribers_drawn == before[0]  # nor a subscriber id
        finally:
            admin.execute(text("SELECT pg_advisory_unlock(:lock)"), {"lock": lock})
        record = added.result(timeout=WAIT)
    assert record is not None and record.id > before[0]
    assert drawn(admin)[1] > before[1]


def test_a_failing_event_insert_leaves_no_subscriber(
    server_storage: Any, admin: Connection
) -> None:
    first = signup_event(0)
    assert server_storage.add_subscriber(make_subscriber_data("one@example.org"), [first])
    duplicate = signup_event(1, event_id=first.event_id)  # event ids are unique
    with pytest.raises(exc.IntegrityError):
        server_storage.add_subscriber(
            make_subscriber_data("two@example.org"), [signup_event(2), duplicate]
        )
    with server_storage.transaction(write=False) as uow:
        assert uow.subscribers.get_by_email("two@example.org") is None
    assert admin.scalar(text("SELECT count(*) FROM nc_outbox_events")) == 1


def test_the_statement_runs_in_autocommit_and_returns_its_connection_as_lent(
    postgres_storage: Any,
) -> None:
    from psycopg.pq import TransactionStatus

    postgres_storage.engine.dispose()  # one pooled connection from here on
    assert postgres_storage.add_subscriber(
        make_subscriber_data("auto@example.org"), [signup_event()]
    )
    pooled = postgres_storage.engine.pool.checkedin()
    raw = postgres_storage.engine.raw_connection()
    try:
        assert pooled == 1 and raw.dbapi_connection is not None
        assert raw.dbapi_connection.autocommit is False
        assert raw.dbapi_connection.info.transaction_status == TransactionStatus.IDLE
    finally:
        raw.close()
    with postgres_storage.transaction(write=False) as uow:
        advisory = uow.connection.scalar(
            text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        )
    assert advisory == 0  # the horizons' locks ended with the statement (other databases on
    # the server, e.g. another suite's, may hold theirs)
