"""Outbox batches own seq ranges (migration 0004): on PostgreSQL a freeze must never
cover a seq that can still commit. Every enqueue enters the outbox's commit horizon (a shared
advisory lock, taken in the INSERT before the seq is drawn); the freeze waits for the enqueues
in flight. Without that, a claim would freeze the later event alone, and the earlier one,
committing afterwards below the frozen range, would never be sent.

SQLite writers take turns, so no enqueue is ever in flight during a claim; these run in the
PostgreSQL pass. The whole runner under concurrent signups is ``test_reliability_*``.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tests.plugins.sql_store.test_commit_horizon import OpenInsert

T0 = datetime(2026, 11, 21, 12, 0)
WAIT = 10.0  # seconds


def enqueue(uow: Any, n: int) -> str:
    event_id = str(uuid.uuid4())
    uow.outbox.enqueue(
        event_id=event_id,
        event_type="contact.message",
        occurred_at=T0,
        payload={"n": n},
        subscriber_key=None,
        created_at=T0,
    )
    return event_id


def claim(storage: Any) -> list[Any]:
    with storage.transaction() as uow:
        return list(
            uow.outbox.claim_batches(
                now=T0, lease_until=T0 + timedelta(minutes=1), batch_size=100, max_batches=10
            )
        )


def open_enqueue(storage: Any) -> OpenInsert:
    """An enqueue whose transaction stays open until ``.commit()``; ``.id`` is its event id."""
    return OpenInsert(storage, lambda uow, _: enqueue(uow, 0), "enqueue")


def test_a_claim_waits_for_an_enqueue_in_flight_and_freezes_it_first(server_storage: Any) -> None:
    early = open_enqueue(server_storage)  # the smaller seq, committing last
    with server_storage.transaction() as uow:
        late = enqueue(uow, 1)
    with ThreadPoolExecutor(max_workers=1) as pool:
        claimed = pool.submit(claim, server_storage)
        with pytest.raises(TimeoutError):
            claimed.result(timeout=0.5)  # freezing now would put ``late`` alone in a range
        early.commit()
        batches = claimed.result(timeout=WAIT)
    assert [[e.event_id for e in b.events] for b in batches] == [[early.id, late]]
    assert claim(server_storage) == []


def test_enqueues_do_not_wait_for_each_other(server_storage: Any) -> None:
    held = open_enqueue(server_storage)
    try:

        def second() -> str:
            with server_storage.transaction() as uow:
                return enqueue(uow, 1)

        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(second).result(timeout=WAIT)
    finally:
        held.commit()


def test_the_enqueue_takes_the_horizon_lock_before_drawing_its_seq(postgres_storage: Any) -> None:
    # The lock comes from a subquery the INSERT reads its row from: the plan must evaluate it
    # below the row (where the seq default is computed), not flatten it away.
    with postgres_storage.transaction() as uow:
        enqueue(uow, 0)
        held = uow.connection.scalar(
            text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                "AND mode = 'ShareLock' AND pid = pg_backend_pid()"
            )
        )
    assert held == 1
    # Transaction-scoped: gone with the commit; the claim's barrier too.
    assert advisory_locks(postgres_storage) == 0


def advisory_locks(storage: Any) -> int:
    """Advisory locks held by any session on this test's database (idle pooled connections
    included; other databases on the server, another test run's, are not counted)."""
    query = text(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    with storage.transaction(write=False) as uow:
        return int(uow.connection.scalar(query))


def test_a_claim_lets_go_of_the_barrier_it_froze_behind(postgres_storage: Any) -> None:
    # The barrier is a session-level lock, released inside the statement that reads the queue:
    # a pooled connection still holding it would make every later enqueue wait forever.
    with postgres_storage.transaction() as uow:
        enqueue(uow, 0)
    assert len(claim(postgres_storage)) == 1
    assert advisory_locks(postgres_storage) == 0
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(enqueue_alone, postgres_storage).result(timeout=WAIT)


def enqueue_alone(storage: Any) -> str:
    with storage.transaction() as uow:
        return enqueue(uow, 1)


def test_a_claim_failing_behind_the_barrier_does_not_keep_it(
    postgres_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import DataError

    from newsletter_connector.plugins.sql_store import outbox_claims

    with postgres_storage.transaction() as uow:
        enqueue(uow, 0)
    monkeypatch.setattr(outbox_claims, "_QUEUED_AT_HORIZON", text("SELECT 1 / 0"))
    with pytest.raises(DataError):
        claim(postgres_storage)  # fails after the barrier was taken, before it was let go
    monkeypatch.undo()
    assert advisory_locks(postgres_storage) == 0  # the connection was closed, not pooled
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(enqueue_alone, postgres_storage).result(timeout=WAIT)
    assert [len(batch.events) for batch in claim(postgres_storage)] == [2]


def test_a_claim_turns_off_sorting_and_jit_for_its_transaction(postgres_storage: Any) -> None:
    # enable_sort: the queue's estimate is often stale and PostgreSQL then sorted every queued
    # event; jit: a plan keeping a disabled sort costs enough to be JIT-compiled (~130 ms).
    with postgres_storage.transaction() as uow:
        enqueue(uow, 0)
    with postgres_storage.transaction() as uow:
        uow.outbox.claim_batches(
            now=T0, lease_until=T0 + timedelta(minutes=1), batch_size=100, max_batches=10
        )
        settings = uow.connection.execute(
            text("SELECT current_setting('enable_sort'), current_setting('jit')")
        ).one()
    assert tuple(settings) == ("off", "off")
    with postgres_storage.transaction() as uow:
        assert uow.connection.scalar(text("SELECT current_setting('enable_sort')")) == "on"
