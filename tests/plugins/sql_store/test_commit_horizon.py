"""PostgreSQL's commit horizon: inserts run side by side, and a keyset walk page
waits for the inserts in flight instead of skipping an id that commits late.

On SQLite writers take turns (``BEGIN IMMEDIATE``), so neither situation can arise there; these
tests run in the PostgreSQL pass. The walks under real concurrent load are
``test_reliability_concurrency.py`` and ``test_subscribers_concurrency.py`` (both databases).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any

import pytest
from sqlalchemy import text

from newsletter_connector.model.contact import DEFAULT_PREFS
from newsletter_connector.plugins.sql_store.analytics import EVENTS_HORIZON as ANALYTICS_HORIZON
from newsletter_connector.plugins.sql_store.subscribers import SIGNUP_LOCK_ID
from newsletter_connector.storage.records import SubscriberData
from tests.support.subscriber_helpers import SUBSCRIBERS

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=timezone.utc)
WAIT = 10.0  # seconds: far above any honest wait here, so only a real block times out


def subscriber(email: str) -> SubscriberData:
    return SubscriberData(
        email=email, first_name=None, last_name=None, zip=None, phone=None,
        sms_enabled=False, prefs=DEFAULT_PREFS, status="pending", age_range=None, gender=None,
        gender_self=None, categories=(), consent_source=None, consent_collected_at=None,
        created_at=NOW, updated_at=NOW, confirmed_at=None, unsubscribed_at=None,
        bounced_at=None, profile_completed_at=None, confirm_token=f"c-{email}",
        unsubscribe_token=f"u-{email}", profile_token=f"p-{email}",
    )  # fmt: skip


def add_subscriber(uow: Any, name: str) -> int:
    record = uow.subscribers.add(subscriber(f"{name}@example.org"))
    assert record is not None
    return int(record.id)


def add_message(uow: Any, name: str) -> int:
    record = uow.messages.add(
        email=f"{name}@example.org", name=name, message="hello", submitted_at=NOW
    )
    return int(record.id)


def add_event(uow: Any, name: str) -> int:
    return int(
        uow.analytics.add_event(
            occurred_at=NOW.replace(tzinfo=None), event_type="pageview", visitor_id=name,
            session_id=name, path=f"/{name}", referrer="", props=None, engaged_seconds=None,
        )
    )  # fmt: skip


def walk_subscribers(uow: Any) -> list[int]:
    return [r.id for r in uow.subscribers.list_page(status=None, after_id=None, limit=100)]


def walk_messages(uow: Any) -> list[int]:
    return [r.id for r in uow.messages.list_page(after_id=None, limit=100)]


def walk_events(uow: Any) -> list[int]:
    return [e.id for e in uow.analytics.events_after(0, 100)]


TABLES = {
    "subscribers": (add_subscriber, walk_subscribers),
    "contact messages": (add_message, walk_messages),
    "analytics events": (add_event, walk_events),
}
#: Each table's horizon lock and the sequence its ids are drawn from.
HORIZONS = {
    "subscribers": (SIGNUP_LOCK_ID, "nc_subscribers_id_seq"),
    "contact messages": (SIGNUP_LOCK_ID + 1, "nc_contact_messages_id_seq"),
    "analytics events": (ANALYTICS_HORIZON.lock, "nc_analytics_events_id_seq"),
}


class OpenInsert:
    """An insert whose transaction stays open (on its own thread) until :meth:`commit`."""

    def __init__(self, storage: Any, add: Callable[[Any, str], Any], name: str) -> None:
        self._added: Future[Any] = Future()
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(storage, add, name))
        self._thread.start()
        self.id = self._added.result(timeout=WAIT)

    def _run(self, storage: Any, add: Callable[[Any, str], Any], name: str) -> None:
        try:
            with storage.transaction() as uow:
                self._added.set_result(add(uow, name))
                self._release.wait(WAIT)
        except BaseException as exc:  # surfaced through the future
            if not self._added.done():
                self._added.set_exception(exc)
            raise

    def commit(self) -> None:
        self._release.set()
        self._thread.join(WAIT)
        assert not self._thread.is_alive()


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


@pytest.mark.parametrize("table", TABLES)
def test_inserts_do_not_wait_for_each_other(
    server_storage: Any, pool: ThreadPoolExecutor, table: str
) -> None:
    add, _ = TABLES[table]
    held = OpenInsert(server_storage, add, "first")
    try:

        def second() -> int:
            with server_storage.transaction() as uow:
                return add(uow, "second")

        # With inserts taking turns behind one lock this would wait for ``held`` and time out.
        assert pool.submit(second).result(timeout=WAIT) > held.id
    finally:
        held.commit()


@pytest.mark.parametrize("table", TABLES)
def test_a_walk_page_waits_for_an_insert_in_flight_and_does_not_skip_it(
    server_storage: Any, pool: ThreadPoolExecutor, table: str
) -> None:
    add, walk = TABLES[table]
    held = OpenInsert(server_storage, add, "early")  # the smaller id, committing last
    with server_storage.transaction() as uow:
        later = add(uow, "late")
    assert later > held.id

    def page() -> list[int]:
        with server_storage.transaction(write=False) as uow:
            return walk(uow)

    walked = pool.submit(page)
    with pytest.raises(TimeoutError):
        walked.result(timeout=0.5)  # waiting for ``held``: returning now would skip its id
    held.commit()
    assert walked.result(timeout=WAIT) == [held.id, later]


@pytest.mark.parametrize("table", TABLES)
def test_an_insert_enters_the_horizon_before_drawing_its_id(
    postgres_storage: Any, pool: ThreadPoolExecutor, table: str
) -> None:
    add, _ = TABLES[table]
    lock, sequence = HORIZONS[table]
    with postgres_storage.engine.connect() as admin:
        admin = admin.execution_options(isolation_level="AUTOCOMMIT")
        drawn = text(f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {sequence}")
        before = admin.scalar(drawn)
        admin.execute(text("SELECT pg_advisory_lock(:lock)"), {"lock": lock})  # a walk's barrier
        try:

            def insert() -> int:
                with postgres_storage.transaction() as uow:
                    return add(uow, "held")

            added = pool.submit(insert)
            with pytest.raises(TimeoutError):
                added.result(timeout=0.5)  # waits for the barrier...
            assert admin.scalar(drawn) == before  # ...before drawing its id
        finally:
            admin.execute(text("SELECT pg_advisory_unlock(:lock)"), {"lock": lock})
        assert added.result(timeout=WAIT) > before


def test_a_walk_leaves_no_advisory_lock_behind(
    postgres_storage: Any, newsletter_client: Any, auth: dict[str, str]
) -> None:
    for n in range(3):
        newsletter_client.simulate_post(
            SUBSCRIBERS, json={"email": f"w{n}@example.org"}, headers=auth
        )
    result = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth, params={"limit": 2})
    assert len(result.json["data"]) == 2
    with postgres_storage.transaction(write=False) as uow:
        held = uow.connection.scalar(
            text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        )
    assert held == 0  # on this database: another worker's test may hold one on its own


def test_read_work_runs_outside_a_transaction_and_write_work_inside_one(
    postgres_storage: Any,
) -> None:
    from psycopg.pq import TransactionStatus

    def status(write: bool) -> TransactionStatus:
        with postgres_storage.transaction(write=write) as uow:
            uow.connection.scalar(text("SELECT 1"))
            return uow.connection.connection.dbapi_connection.info.transaction_status

    assert status(write=False) == TransactionStatus.IDLE  # no BEGIN/COMMIT round trips
    assert status(write=True) == TransactionStatus.INTRANS
