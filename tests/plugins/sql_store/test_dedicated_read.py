"""The key check's own connections on PostgreSQL (``dedicated_read``).

Each thread that checks a key holds one connection, outside the pool, with the statement
prepared on it. These tests hold it to the pool's rules: it answers what a pooled connection
answers, a revocation is seen at once, a forked child never touches its parent's connection,
a thread's connection goes when the thread does, ``close()`` closes all of them, and a
statement a pooler dropped is prepared again. Losing the connection is ``test_pool_ping.py``.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text

from newsletter_connector.errors import NotMigrated
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.fast.dedicated_read import DedicatedReadStatement
from newsletter_connector.plugins.sql_store.fast.key_lookup import _ACTIVE_KEY, ActiveKeyLookup
from newsletter_connector.plugins.sql_store.fast.pooled_statement import PooledStatement
from newsletter_connector.service.context import sha256_hex


@pytest.fixture
def pg_url(newsletter_database_url: str, newsletter_storage: Any) -> str:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite's key check runs on its pool (no server to reach)")
    return newsletter_database_url


@pytest.fixture
def storage(pg_url: str) -> Iterator[BuiltinSqlStorage]:
    made = BuiltinSqlStorage(make_engine(pg_url))
    yield made
    made.close()


def key_check_backends(storage: BuiltinSqlStorage) -> set[int]:
    """The server processes whose last statement was the key check (the dedicated ones)."""
    with storage.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND query LIKE 'SELECT nc_api_keys.id%$1%'"
            )
        )
        return {int(pid) for (pid,) in rows}


def settled_backends(storage: BuiltinSqlStorage, expected: set[int]) -> set[int]:
    """:func:`key_check_backends` once it equals ``expected``, or after 5 s: a closed
    connection's server process leaves ``pg_stat_activity`` a moment after the close."""
    deadline = time.monotonic() + 5
    while (found := key_check_backends(storage)) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def test_it_is_the_statement_the_key_check_uses_on_postgresql(storage: BuiltinSqlStorage) -> None:
    assert isinstance(ActiveKeyLookup(storage.engine)._statement, DedicatedReadStatement)


def test_it_answers_what_a_pooled_connection_answers(
    storage: BuiltinSqlStorage, newsletter_service: Any
) -> None:
    created = newsletter_service.admin.create_api_key("same answer")
    params = {"digest": sha256_hex(created.key)}
    pooled = PooledStatement(storage.engine, _ACTIVE_KEY).first_row(params)
    dedicated = DedicatedReadStatement(storage.engine, _ACTIVE_KEY, idle_ping_seconds=1)
    try:
        assert dedicated.first_row(params) == tuple(pooled)
        assert dedicated.first_row({"digest": "no such digest"}) is None
        record = storage.find_active_api_key(params["digest"])
        assert record is not None and record.label == "same answer"
        assert record.created_at == created.record.created_at
    finally:
        dedicated.close()


def test_a_revocation_is_seen_by_the_next_check(
    storage: BuiltinSqlStorage, newsletter_service: Any
) -> None:
    created = newsletter_service.admin.create_api_key("revoked soon")
    digest = sha256_hex(created.key)
    assert storage.find_active_api_key(digest) is not None
    newsletter_service.admin.revoke_api_key(str(created.record.id))
    assert storage.find_active_api_key(digest) is None


def test_each_thread_holds_one_connection_and_it_goes_with_the_thread(
    storage: BuiltinSqlStorage,
) -> None:
    assert storage.find_active_api_key("no-such-digest") is None
    mine = key_check_backends(storage)
    assert len(mine) == 1
    seen: list[set[int]] = []

    def check_in_a_thread() -> None:
        for _ in range(3):  # the same connection each time
            assert storage.find_active_api_key("no-such-digest") is None
        seen.append(key_check_backends(storage))

    thread = threading.Thread(target=check_in_a_thread)
    thread.start()
    thread.join()
    assert len(seen[0]) == 2 and mine < seen[0]
    gc.collect()
    assert settled_backends(storage, mine) == mine  # the thread's connection closed with it


def test_close_closes_every_threads_connection(pg_url: str) -> None:
    storage = BuiltinSqlStorage(make_engine(pg_url))
    barrier = threading.Barrier(3)

    def check_and_wait() -> None:
        storage.find_active_api_key("no-such-digest")
        barrier.wait()  # all connected
        barrier.wait()  # closed while this thread still lives

    threads = [threading.Thread(target=check_and_wait) for _ in range(2)]
    for thread in threads:
        thread.start()
    barrier.wait()
    observer = BuiltinSqlStorage(make_engine(pg_url))
    try:
        assert len(key_check_backends(observer)) == 2
        storage.close()
        assert settled_backends(observer, set()) == set()
    finally:
        barrier.wait()
        for thread in threads:
            thread.join()
        observer.close()


def test_a_forked_child_opens_its_own_and_leaves_the_parents_alone(
    storage: BuiltinSqlStorage,
) -> None:
    assert storage.find_active_api_key("no-such-digest") is None
    parents = key_check_backends(storage)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: close, check a key, report the backends, exit without cleanup
        status = 1
        try:
            storage.engine.dispose(close=False)  # as a forked worker does with its pool
            storage.close()  # must not close the parent's connection (the socket is shared)
            assert storage.find_active_api_key("no-such-digest") is None
            os.write(write, repr(sorted(key_check_backends(storage))).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as reader:
        reported = reader.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(eval(reported)) == 2  # the parent's and the child's own
    assert storage.find_active_api_key("no-such-digest") is None  # the parent's still works
    assert settled_backends(storage, parents) == parents  # the child's closed at its exit


def test_a_statement_dropped_under_it_is_prepared_again(storage: BuiltinSqlStorage) -> None:
    assert storage.find_active_api_key("no-such-digest") is None
    statement = dedicated_statement_of(storage)
    held = statement._slot.held
    assert held is not None
    held.connection.execute("DEALLOCATE ALL")  # what a pooler's DISCARD ALL does
    assert storage.find_active_api_key("no-such-digest") is None
    assert statement._slot.held is held  # the same connection: no reconnect, no error


def test_an_unmigrated_database_is_reported_as_such(
    storage: BuiltinSqlStorage, pg_url: str
) -> None:
    with storage.engine.begin() as connection:
        connection.execute(text("ALTER TABLE nc_api_keys RENAME TO nc_api_keys_away"))
    try:
        fresh = BuiltinSqlStorage(make_engine(pg_url))
        with pytest.raises(NotMigrated):
            fresh.find_active_api_key("no-such-digest")
        fresh.close()
    finally:
        with storage.engine.begin() as connection:
            connection.execute(text("ALTER TABLE nc_api_keys_away RENAME TO nc_api_keys"))


def dedicated_statement_of(storage: BuiltinSqlStorage) -> DedicatedReadStatement:
    statement = storage._key_lookup._statement
    assert isinstance(statement, DedicatedReadStatement)
    return statement


class _Patched:
    def __init__(self, patched: bool) -> None:
        self.patched = patched

    def is_module_patched(self, name: str) -> bool:
        return self.patched and name == "threading"

    def is_monkey_patched(self, name: str) -> bool:
        return self.patched and name == "thread"


@pytest.mark.parametrize("module", ["gevent.monkey", "eventlet.patcher"])
def test_green_threads_keep_the_pooled_path(
    storage: BuiltinSqlStorage, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    """Under gevent or eventlet every greenlet is a thread: a connection each would be one per
    request in flight, so the key check stays on the pool."""
    monkeypatch.setitem(sys.modules, module, _Patched(True))
    assert isinstance(ActiveKeyLookup(storage.engine)._statement, PooledStatement)
    monkeypatch.setitem(sys.modules, module, _Patched(False))
    assert isinstance(ActiveKeyLookup(storage.engine)._statement, DedicatedReadStatement)
