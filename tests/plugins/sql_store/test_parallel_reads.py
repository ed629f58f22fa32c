"""Read statements shared between two PostgreSQL connections (``parallel_reads``):
only a read-only unit of work on PostgreSQL shares them; results keep their order; an error
in either connection is raised in the caller; a pool that cannot lend a second connection
never makes the caller wait.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import exc as sa_exc
from sqlalchemy import func, literal, select, text
from sqlalchemy.pool import StaticPool

from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.fast.parallel_reads import read_all, shares_reads
from tests.support.analytics_helpers import clocked_service
from tests.support.waiting import wait_until

T0 = datetime(2026, 3, 1)


def backend_pid(sleep: float) -> Any:
    """A statement answering with the server process that ran it, after ``sleep`` seconds."""
    return select(func.pg_backend_pid().label("pid"), func.pg_sleep(sleep).label("slept"))


def own_pid(uow: Any) -> int:
    return int(uow.connection.execute(select(func.pg_backend_pid())).scalar_one())


def test_results_keep_the_order_given(newsletter_storage: Any) -> None:
    statements = [select(literal(n).label("n")) for n in range(7)]
    for write in (False, True):
        with newsletter_storage.transaction(write=write) as uow:
            results = read_all(uow.connection, statements)
        assert [[dict(row) for row in rows] for rows in results] == [[{"n": n}] for n in range(7)]


def test_only_a_read_on_postgresql_shares_its_statements(newsletter_storage: Any) -> None:
    postgres = newsletter_storage.dialect == "postgresql"
    with newsletter_storage.transaction(write=False) as uow:
        assert shares_reads(uow.connection) is postgres
    with newsletter_storage.transaction() as uow:
        assert shares_reads(uow.connection) is False


def test_a_read_runs_its_statements_on_two_connections(postgres_storage: Any) -> None:
    with postgres_storage.transaction(write=False) as uow:
        pids = [rows[0]["pid"] for rows in read_all(uow.connection, [backend_pid(0.2)] * 4)]
        assert own_pid(uow) in pids
    assert len(set(pids)) == 2


def test_a_write_transaction_keeps_its_statements_and_sees_its_own_writes(
    postgres_storage: Any,
) -> None:
    with postgres_storage.transaction() as uow:
        uow.connection.execute(text("CREATE TEMPORARY TABLE only_here (n int)"))
        uow.connection.execute(text("INSERT INTO only_here VALUES (1), (2)"))
        results = read_all(
            uow.connection, [backend_pid(0.05)] * 3 + [text("SELECT sum(n) AS n FROM only_here")]
        )
        assert {rows[0]["pid"] for rows in results[:3]} == {own_pid(uow)}
        assert results[3][0]["n"] == 3


def test_an_error_on_the_second_connection_is_raised_in_the_caller(postgres_storage: Any) -> None:
    # the caller takes the first statement at once; the helper, once connected, the second
    statements = [backend_pid(0.3), text("SELECT 1 / 0 AS n"), backend_pid(0.0)]
    with postgres_storage.transaction(write=False) as uow:
        with pytest.raises(sa_exc.DataError, match="division by zero"):
            read_all(uow.connection, statements)
        # the helper gave its connection back before the error reached the caller
        assert postgres_storage.engine.pool.checkedout() == 1
        assert uow.connection.execute(select(literal(1))).scalar_one() == 1
    assert postgres_storage.engine.pool.checkedout() == 0


def test_an_error_on_the_callers_connection_waits_for_the_helper(postgres_storage: Any) -> None:
    statements = [text("SELECT 1 / 0 AS n"), backend_pid(0.3), backend_pid(0.3)]
    with (
        postgres_storage.transaction(write=False) as uow,
        pytest.raises(sa_exc.DataError, match="division by zero"),
    ):
        read_all(uow.connection, statements)
    # the helper's own check-in follows its last statement by a moment
    assert wait_until(lambda: postgres_storage.engine.pool.checkedout() == 0, timeout=5)


def test_a_pool_with_no_second_connection_never_makes_the_caller_wait(
    newsletter_database_url: str,
) -> None:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite never shares its statements")
    storage = SqlStorage(
        make_engine(newsletter_database_url, pool_size=1, max_overflow=0, pool_timeout=30)
    )
    try:
        with storage.transaction(write=False) as uow:
            began = time.monotonic()
            results = read_all(uow.connection, [backend_pid(0.0)] * 3)
            assert time.monotonic() - began < 10  # not the pool's 30 s timeout
            assert {rows[0]["pid"] for rows in results} == {own_pid(uow)}
    finally:
        storage.close()


def test_a_single_connection_pool_never_shares(newsletter_database_url: str) -> None:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite never shares its statements")
    storage = SqlStorage(make_engine(newsletter_database_url, poolclass=StaticPool))
    try:
        with storage.transaction(write=False) as uow:
            assert shares_reads(uow.connection) is False
    finally:
        storage.close()


def test_rollup_figures_are_the_same_shared_or_not(
    newsletter_settings: Any, newsletter_storage: SqlStorage
) -> None:
    service, clock = clocked_service(newsletter_settings, newsletter_storage, T0)
    record = service.analytics.record_event
    for n in range(60):
        clock.now = T0 + timedelta(hours=n * 3)
        ids = {"visitor_id": f"visitor-{n % 7}", "session_id": f"session-{n % 11}"}
        record("pageview", **ids, path=f"/p{n % 4}")
        if n % 3 == 0:
            record("link click", **ids, path="/p1", href="https://elsewhere.example/")
        if n % 4 == 0:
            record("engagement ping", **ids, path="/p2", seconds=n + 0.5)
    storage = newsletter_storage
    start, end = T0, T0 + timedelta(days=10)
    with storage.transaction(write=False) as uow:
        shared = uow.analytics.daily_traffic(start, end, top_pages=3)
    with storage.transaction() as uow:
        alone = uow.analytics.daily_traffic(start, end, top_pages=3)
    assert shared == alone
    assert sum(day.pageviews for day in shared.values()) == 60
    assert sum(day.link_clicks for day in shared.values()) == 20


def test_a_lost_second_connection_is_a_lost_database_to_the_caller(postgres_storage: Any) -> None:
    # the caller takes the first statement; the helper the second, whose server process is
    # ended mid-statement
    statements = [backend_pid(0.3), text("SELECT pg_sleep(30), 'helper' AS marker")]

    def end_the_helpers_backend() -> None:
        # autocommit: pg_stat_activity is read once per transaction
        with postgres_storage.engine.connect().execution_options(
            isolation_level="AUTOCOMMIT"
        ) as admin:
            for _ in range(100):
                ended = admin.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE query LIKE '%''helper'' AS marker%' AND pid <> pg_backend_pid()"
                    )
                ).all()
                if ended:
                    return
                time.sleep(0.05)

    ender = threading.Thread(target=end_the_helpers_backend)
    ender.start()
    began = time.monotonic()
    try:
        with pytest.raises(DbUnavailable), postgres_storage.transaction(write=False) as uow:
            read_all(uow.connection, statements)
    finally:
        ender.join()
    assert time.monotonic() - began < 20  # not the statement's 30 s
    with postgres_storage.transaction(write=False) as uow:  # the store carries on
        assert [
            rows[0]["n"] for rows in read_all(uow.connection, [select(literal(1).label("n"))] * 2)
        ] == [1, 1]
