"""Pooled PostgreSQL connections are pinged only after sitting idle.

``pool_pre_ping`` cost a round trip on every request. Now a connection idle longer than
``idle_ping_seconds`` is pinged and replaced if dead; one in steady use is not, so a dead
one fails a single request with ``db_unavailable`` and the pool reconnects after it. The
whole-server outage is ``test_outage.py``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from functools import partial
from typing import Any

import pytest
from sqlalchemy import text

from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.storage.outbox_records import NewEvent


@pytest.fixture
def pg_url(newsletter_database_url: str) -> str:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL only: SQLite connections are files, with no server to lose")
    return newsletter_database_url


def backend_pid(storage: BuiltinSqlStorage) -> int:
    with storage.transaction(write=False) as uow:
        return int(uow.connection.scalar(text("SELECT pg_backend_pid()")))


def terminate(url: str, pid: int) -> None:
    """End the server process ``pid`` and wait until it is gone."""
    admin = make_engine(url)
    with admin.connect() as connection:
        # pg_terminate_backend with a timeout waits for the process to exit.
        assert connection.scalar(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid})
    admin.dispose()


@pytest.fixture
def storages(pg_url: str) -> Iterator[dict[str, BuiltinSqlStorage]]:
    made = {
        "pinged": BuiltinSqlStorage(make_engine(pg_url, idle_ping_seconds=0)),
        "in steady use": BuiltinSqlStorage(make_engine(pg_url, idle_ping_seconds=3600)),
    }
    yield made
    for storage in made.values():
        storage.close()


def kill_pooled_connection(url: str, storage: BuiltinSqlStorage) -> int:
    """Use ``storage`` once, then end its pooled connection's backend; return that pid."""
    pid = backend_pid(storage)
    terminate(url, pid)
    return pid


def test_an_idle_connection_that_died_is_replaced_before_use(
    pg_url: str, storages: dict[str, BuiltinSqlStorage]
) -> None:
    dead = kill_pooled_connection(pg_url, storages["pinged"])
    assert backend_pid(storages["pinged"]) != dead  # the ping found it dead: nothing failed


def test_a_connection_in_steady_use_fails_once_then_the_pool_reconnects(
    pg_url: str, storages: dict[str, BuiltinSqlStorage]
) -> None:
    dead = kill_pooled_connection(pg_url, storages["in steady use"])
    with pytest.raises(DbUnavailable):
        backend_pid(storages["in steady use"])  # not pinged: no round trip for a busy one
    assert backend_pid(storages["in steady use"]) != dead


def key_check_backend(storage: BuiltinSqlStorage) -> int:
    """The server process of ``storage``'s key check (its own connection, outside the pool):
    the one whose last statement was the prepared look-up. Check one key first. (A connection
    closed just before may linger in ``pg_stat_activity`` a moment: wait up to 5 s for one.)"""
    deadline = time.monotonic() + 5
    while True:
        with storage.transaction(write=False) as uow:
            pids = uow.connection.scalars(
                text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid() AND query LIKE 'SELECT nc_api_keys.id%$1%'"
                )
            ).all()
        if len(pids) == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert len(pids) == 1, pids
    return int(pids[0])


def test_the_key_check_reconnects_the_same_way(
    pg_url: str, storages: dict[str, BuiltinSqlStorage], newsletter_storage: Any
) -> None:
    """The per-request key check (a connection of its own, not a pooled one) loses a dead
    connection once, then reconnects; an idle dead one is replaced unseen."""
    busy, pinged = storages["in steady use"], storages["pinged"]
    assert busy.find_active_api_key("no-such-digest") is None
    dead = key_check_backend(busy)
    terminate(pg_url, dead)
    with pytest.raises(DbUnavailable):
        busy.find_active_api_key("no-such-digest")  # not pinged: no round trip when busy
    assert busy.find_active_api_key("no-such-digest") is None
    assert key_check_backend(busy) != dead
    busy.close()  # so the next key check found is the pinged one's

    assert pinged.find_active_api_key("no-such-digest") is None
    dead = key_check_backend(pinged)
    terminate(pg_url, dead)
    assert pinged.find_active_api_key("no-such-digest") is None  # the ping found it dead
    assert key_check_backend(pinged) != dead


def test_the_signup_reconnects_the_same_way(
    pg_url: str, storages: dict[str, BuiltinSqlStorage], newsletter_storage: Any
) -> None:
    """PostgreSQL's one-statement signup runs on a pooled DB-API connection too."""
    from newsletter_connector.testing.subscriber_samples import make_subscriber_data

    busy = storages["in steady use"]
    assert busy.add_subscriber(make_subscriber_data("a@example.org"), []) is not None
    terminate(pg_url, backend_pid(busy))
    signup = partial(busy.add_subscriber, make_subscriber_data("b@example.org"))
    with pytest.raises(DbUnavailable):
        signup([_event()])
    assert signup([_event()]) is not None


def _event() -> NewEvent:
    now = datetime(2026, 1, 1)
    return NewEvent(str(uuid.uuid4()), "newsletter.signup", now, {}, None, now)
