"""The built-in store's outbox: events queued with their change, frozen into batches, leased,
settled and counted."""

from __future__ import annotations

import threading
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.testing.threads import run_together

T0 = datetime(2026, 3, 4, 5, 6, 7)
LEASE = timedelta(seconds=45)


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def _enqueue(storage: Any, count: int, *, key: str | None = None, start: int = 0) -> list[str]:
    ids = []
    with storage.transaction() as uow:
        for n in range(start, start + count):
            event_id = str(uuid.uuid4())
            ids.append(event_id)
            uow.outbox.enqueue(
                event_id=event_id,
                event_type="contact.message",
                occurred_at=T0 + timedelta(seconds=n),
                payload={"n": n},
                subscriber_key=key,
                created_at=T0 + timedelta(seconds=n),
            )
    return ids


def _claim(storage: Any, *, size: int, batches: int, now: datetime = T0) -> list[Any]:
    with storage.transaction() as uow:
        return list(
            uow.outbox.claim_batches(
                now=now, lease_until=now + LEASE, batch_size=size, max_batches=batches
            )
        )


def _freeze_and_claim(storage: Any, *, size: int = 100, now: datetime = T0) -> Any:
    """Claim one batch (a due one, or a new one of up to ``size`` events); ``None`` if none."""
    claimed = _claim(storage, size=size, batches=1, now=now)
    assert len(claimed) <= 1
    return claimed[0] if claimed else None


class TestSqlOutbox:
    """The runner's outbox contract: frozen batches, claims of several, leases, settling,
    operator figures."""

    def test_freeze_takes_oldest_first_up_to_the_limit(self, storage: Any) -> None:
        ids = _enqueue(storage, 5)
        first = _freeze_and_claim(storage, size=3)
        assert [e.event_id for e in first.events] == ids[:3]
        assert [e.payload for e in first.events] == [{"n": 0}, {"n": 1}, {"n": 2}]
        assert first.attempts == 1
        assert first.lease_until == T0 + LEASE
        second = _freeze_and_claim(storage, size=3)
        assert [e.event_id for e in second.events] == ids[3:]

    def test_claimed_events_carry_what_was_enqueued(self, storage: Any) -> None:
        times = [T0, T0.replace(microsecond=5), T0.replace(microsecond=999999)]
        payloads = [{"n": 0, "name": "Zoë"}, {"nested": {"a": [1, 2.5]}}, {}]
        with storage.transaction() as uow:
            for n, (at, payload) in enumerate(zip(times, payloads, strict=True)):
                uow.outbox.enqueue(
                    event_id=f"e-{n}",
                    event_type=f"type.{n}",
                    occurred_at=at,
                    payload=payload,
                    subscriber_key=None,
                    created_at=T0,
                )

        def carried(batch: Any) -> list[tuple[Any, ...]]:
            return [(e.event_id, e.event_type, e.occurred_at, e.payload) for e in batch.events]

        expected = [(f"e-{n}", f"type.{n}", times[n], payloads[n]) for n in range(len(payloads))]
        frozen = _freeze_and_claim(storage, size=10)
        assert carried(frozen) == expected
        with storage.transaction() as uow:  # back to pending: the same events come again
            uow.outbox.release_claims([frozen.id], lease_until=frozen.lease_until)
        assert carried(_freeze_and_claim(storage, size=10)) == expected

    def test_claim_with_nothing_queued_makes_no_batch(self, storage: Any) -> None:
        assert _claim(storage, size=10, batches=5) == []
        with storage.transaction() as uow:
            empty = dict.fromkeys(("pending", "sending", "delivered", "failed"), 0)
            assert uow.outbox.status().batches == empty

    def test_one_claim_leases_several_batches_oldest_first(self, storage: Any) -> None:
        ids = _enqueue(storage, 7)
        claimed = _claim(storage, size=3, batches=5)
        assert [[e.event_id for e in b.events] for b in claimed] == [ids[:3], ids[3:6], ids[6:]]
        assert [(b.attempts, b.lease_until) for b in claimed] == [(1, T0 + LEASE)] * 3
        assert len({b.id for b in claimed}) == 3
        with storage.transaction(write=False) as uow:
            status = uow.outbox.status()
        assert status.batches["sending"] == 3
        assert status.unbatched == 0

    def test_due_batches_come_before_new_ones_and_fill_the_claim(self, storage: Any) -> None:
        ids = _enqueue(storage, 4)
        first = _freeze_and_claim(storage, size=2)
        with storage.transaction() as uow:
            uow.outbox.schedule_retry(first.id, error="HTTP 500", next_attempt_at=T0)
        claimed = _claim(storage, size=2, batches=2)
        assert claimed[0].id == first.id
        assert [[e.event_id for e in b.events] for b in claimed] == [ids[:2], ids[2:]]
        assert [b.attempts for b in claimed] == [2, 1]

    def test_batches_frozen_together_stay_oldest_first_when_returned(self, storage: Any) -> None:
        ids = _enqueue(storage, 9)
        claimed = _claim(storage, size=3, batches=3)
        later = T0 + LEASE + timedelta(seconds=1)
        with storage.transaction() as uow:
            assert uow.outbox.release_expired_leases(now=later) == 3
        again = _claim(storage, size=3, batches=3, now=later)
        assert [b.id for b in again] == [b.id for b in claimed]
        assert [e.event_id for b in again for e in b.events] == ids

    def test_released_claims_return_as_if_never_claimed(self, storage: Any) -> None:
        ids = _enqueue(storage, 4)
        claimed = _claim(storage, size=2, batches=2)
        with storage.transaction() as uow:
            wrong_lease = T0 + 2 * LEASE
            assert uow.outbox.release_claims([claimed[1].id], lease_until=wrong_lease) == 0
            assert uow.outbox.release_claims([claimed[1].id], lease_until=T0 + LEASE) == 1
            assert uow.outbox.release_claims([], lease_until=T0 + LEASE) == 0
            status = uow.outbox.status()
        assert (status.batches["pending"], status.batches["sending"]) == (1, 1)
        again = _freeze_and_claim(storage, size=2)
        assert again.id == claimed[1].id
        assert again.attempts == 1  # the released claim was not an attempt
        assert [e.event_id for e in again.events] == ids[2:]

    def test_settle_delivered_takes_several_batches(self, storage: Any) -> None:
        _enqueue(storage, 3)
        claimed = _claim(storage, size=1, batches=3)
        with storage.transaction() as uow:
            ids = [b.id for b in claimed]
            assert uow.outbox.settle_delivered(ids[:2], at=T0, lease_until=T0 + LEASE) == 2
            assert uow.outbox.settle_delivered(ids, at=T0, lease_until=T0 + LEASE) == 1
            assert uow.outbox.settle_delivered([], at=T0) == 0
            assert uow.outbox.status().batches["delivered"] == 3

    def test_a_sending_batch_is_not_claimed_again(self, storage: Any) -> None:
        _enqueue(storage, 2)
        assert _freeze_and_claim(storage) is not None
        assert _freeze_and_claim(storage) is None

    def test_retry_keeps_members_and_ids_and_waits_until_due(self, storage: Any) -> None:
        ids = _enqueue(storage, 3)
        batch = _freeze_and_claim(storage)
        later = T0 + timedelta(minutes=1)
        with storage.transaction() as uow:
            assert uow.outbox.schedule_retry(batch.id, error="HTTP 500", next_attempt_at=later)
        assert _freeze_and_claim(storage, now=later - timedelta(seconds=1)) is None
        _enqueue(storage, 2, start=10)  # newer events never join a frozen batch
        again = _freeze_and_claim(storage, now=later)
        assert again.id == batch.id
        assert again.attempts == 2
        assert [e.event_id for e in again.events] == ids

    def test_settle_delivered_and_failed(self, storage: Any) -> None:
        _enqueue(storage, 2)
        delivered, failing = _claim(storage, size=1, batches=2)
        with storage.transaction() as uow:
            assert uow.outbox.settle_delivered([delivered.id], at=T0) == 1
            assert uow.outbox.settle_delivered([delivered.id], at=T0) == 0  # not sending now
            assert uow.outbox.mark_failed(failing.id, error="HTTP 400", at=T0)
            status = uow.outbox.status()
            record = uow.outbox.get_batch(failing.id)
        assert status.batches["delivered"] == 1
        assert status.batches["failed"] == 1
        assert status.failed_events == 1
        assert status.undelivered_events == 0
        assert status.last_error == "HTTP 400"
        assert record is not None
        assert (record.state, record.event_count, record.settled_at) == ("failed", 1, T0)

    def test_expired_leases_return_to_pending(self, storage: Any) -> None:
        _enqueue(storage, 1)
        batch = _freeze_and_claim(storage)
        with storage.transaction() as uow:
            assert uow.outbox.release_expired_leases(now=T0 + LEASE) == 0
            assert uow.outbox.release_expired_leases(now=T0 + LEASE + timedelta(seconds=1)) == 1
        again = _freeze_and_claim(storage, now=T0 + LEASE + timedelta(seconds=1))
        assert again.id == batch.id
        assert again.attempts == 2

    def test_status_counts_unbatched_and_oldest_pending(self, storage: Any) -> None:
        _enqueue(storage, 3)
        with storage.transaction(write=False) as uow:
            status = uow.outbox.status()
        assert (status.unbatched, status.undelivered_events) == (3, 3)
        assert status.oldest_pending_at == T0
        assert status.last_error is None
        batch = _freeze_and_claim(storage, size=1)
        with storage.transaction() as uow:
            uow.outbox.settle_delivered([batch.id], at=T0)
            status = uow.outbox.status()
        assert (status.unbatched, status.undelivered_events) == (2, 2)
        assert status.oldest_pending_at == T0 + timedelta(seconds=1)

    def test_status_counts_batches_waiting_to_retry_and_the_last_delivery(
        self, storage: Any
    ) -> None:
        with storage.transaction(write=False) as uow:
            empty = uow.outbox.status()
        assert (empty.waiting_retry, empty.last_delivered_at) == (0, None)
        _enqueue(storage, 4)
        waiting, failed, first, second = _claim(storage, size=1, batches=4)
        later = T0 + timedelta(hours=1)
        with storage.transaction() as uow:
            uow.outbox.schedule_retry(waiting.id, error="HTTP 503", next_attempt_at=later)
            uow.outbox.mark_failed(failed.id, error="gave up", at=T0)
            uow.outbox.settle_delivered([second.id], at=T0 + timedelta(minutes=5))
            uow.outbox.settle_delivered([first.id], at=T0 + timedelta(minutes=2))
            status = uow.outbox.status()
        assert status.waiting_retry == 1
        assert status.last_delivered_at == T0 + timedelta(minutes=5)

    def test_failed_listing_pages_by_id_and_replay(self, storage: Any) -> None:
        _enqueue(storage, 3)
        ids = sorted(batch.id for batch in _claim(storage, size=1, batches=3))
        with storage.transaction() as uow:
            for batch_id in ids:
                uow.outbox.mark_failed(batch_id, error="gave up", at=T0)
        with storage.transaction() as uow:
            page = uow.outbox.failed_batches(limit=2)
            rest = uow.outbox.failed_batches(after=page[-1].id, limit=2)
            assert [r.id for r in page + rest] == ids
            assert uow.outbox.replay_failed(ids[0], at=T0) == 1
            assert uow.outbox.replay_failed(ids[0], at=T0) == 0  # no longer failed
            again = uow.outbox.claim_batches(
                now=T0, lease_until=T0 + LEASE, batch_size=100, max_batches=1
            )[0]
            assert again.id == ids[0]
            assert again.attempts == 1  # a fresh ladder
            assert uow.outbox.replay_failed(None, at=T0) == 2

    def test_retry_waiting_now_moves_only_waiting_batches(self, storage: Any) -> None:
        _enqueue(storage, 5)
        waiting, failed, delivered, sending = _claim(storage, size=1, batches=4)
        fresh = _freeze_and_claim(storage, size=1)
        later = T0 + timedelta(hours=1)
        with storage.transaction() as uow:
            uow.outbox.release_claims([fresh.id], lease_until=fresh.lease_until)
            uow.outbox.schedule_retry(waiting.id, error="HTTP 503", next_attempt_at=later)
            uow.outbox.mark_failed(failed.id, error="gave up", at=T0)
            uow.outbox.settle_delivered([delivered.id], at=T0)
        now = T0 + timedelta(minutes=1)
        with storage.transaction() as uow:
            before = {b.id: uow.outbox.get_batch(b.id) for b in (failed, delivered, sending, fresh)}
            assert uow.outbox.retry_waiting_now(now=now) == 1
            assert uow.outbox.retry_waiting_now(now=now) == 0  # due now: no longer waiting
            moved = uow.outbox.get_batch(waiting.id)
            assert (moved.state, moved.attempts, moved.next_attempt_at) == ("pending", 1, now)
            assert moved.last_error == "HTTP 503"
            assert {b: uow.outbox.get_batch(b) for b in before} == before
            claimed = uow.outbox.claim_batches(
                now=now, lease_until=now + LEASE, batch_size=1, max_batches=5
            )
        assert {b.id: b.attempts for b in claimed} == {fresh.id: 1, waiting.id: 2}

    def test_erasure_empties_a_frozen_batch(self, storage: Any) -> None:
        _enqueue(storage, 2, key="gone")
        _enqueue(storage, 1, key="kept", start=5)
        first = _freeze_and_claim(storage)
        with storage.transaction() as uow:
            assert uow.outbox.discard_for_subscriber("gone") == 2
            uow.outbox.release_claims([first.id], lease_until=first.lease_until)
        batch = _freeze_and_claim(storage)
        assert batch.id == first.id
        assert [e.payload for e in batch.events] == [{"n": 5}]

    def test_events_about_a_subscriber_newest_first_with_their_delivery(self, storage: Any) -> None:
        _enqueue(storage, 2, key="ann")
        _enqueue(storage, 1, key="ben", start=2)
        delivered = _freeze_and_claim(storage, size=1)
        failed = _freeze_and_claim(storage, size=1)
        _enqueue(storage, 1, key="ann", start=3)
        sending = _freeze_and_claim(storage, size=1)  # ben's
        _enqueue(storage, 1, key="ann", start=4)
        with storage.transaction() as uow:
            uow.outbox.settle_delivered([delivered.id], at=T0 + timedelta(minutes=1))
            uow.outbox.mark_failed(failed.id, error="HTTP 400", at=T0 + timedelta(minutes=2))
        retried = _freeze_and_claim(storage, size=1)  # ann's n=3
        with storage.transaction() as uow:
            uow.outbox.schedule_retry(
                retried.id, error="HTTP 503", next_attempt_at=T0 + timedelta(hours=1)
            )
            about = uow.outbox.events_about("ann", limit=10)
            assert [(e.occurred_at - T0).seconds for e in about] == [4, 3, 1, 0]
            assert [(e.state, e.attempts) for e in about] == [
                (None, 0),
                ("pending", 1),
                ("failed", 1),
                ("delivered", 1),
            ]
            assert about[3].settled_at == T0 + timedelta(minutes=1)
            assert about[0].settled_at is None and about[0].event_type == "contact.message"
            assert [e.state for e in uow.outbox.events_about("ben", limit=10)] == ["sending"]
            assert len(uow.outbox.events_about("ann", limit=2)) == 2
            assert uow.outbox.events_about("nobody", limit=10) == []
        assert sending.id not in {delivered.id, failed.id, retried.id}

    def test_events_by_id_with_their_delivery_and_none_for_a_pruned_one(self, storage: Any) -> None:
        pruned, delivered = _enqueue(storage, 2)
        old = _freeze_and_claim(storage, size=1)
        with storage.transaction() as uow:
            uow.outbox.settle_delivered([old.id], at=T0)
            assert uow.outbox.prune_delivered(settled_before=T0 + timedelta(days=8)) == 1
        sent = _freeze_and_claim(storage, size=1)
        with storage.transaction() as uow:
            uow.outbox.settle_delivered([sent.id], at=T0 + timedelta(minutes=3))
        [waiting] = _enqueue(storage, 1, start=2)
        with storage.transaction() as uow:
            found = uow.outbox.events_by_id([pruned, delivered, waiting, str(uuid.uuid4())])
            assert set(found) == {delivered, waiting}
            assert (found[delivered].state, found[delivered].settled_at) == (
                "delivered",
                T0 + timedelta(minutes=3),
            )
            assert found[waiting].state is None and found[waiting].attempts == 0
            assert uow.outbox.events_by_id([]) == {}

    def test_erasing_the_newest_frozen_event_never_hides_a_later_one(self, storage: Any) -> None:
        # A later event must never reuse an erased one's seq inside a frozen range (SQLite
        # reuses the largest rowid without AUTOINCREMENT): it would count as frozen, never sent.
        _enqueue(storage, 1)
        _enqueue(storage, 1, key="gone", start=1)
        first = _freeze_and_claim(storage)
        with storage.transaction() as uow:
            assert uow.outbox.discard_for_subscriber("gone") == 1
        _enqueue(storage, 1, start=2)
        with storage.transaction() as uow:
            assert uow.outbox.status().unbatched == 1
            assert uow.outbox.get_batch(first.id).event_count == 1
        later = _freeze_and_claim(storage)
        assert later.id != first.id
        assert [e.payload for e in later.events] == [{"n": 2}]

    def test_pruning_the_newest_batch_leaves_later_events_queued(self, storage: Any) -> None:
        _enqueue(storage, 2)
        old = _freeze_and_claim(storage)
        with storage.transaction() as uow:
            uow.outbox.settle_delivered([old.id], at=T0)
            assert uow.outbox.prune_delivered(settled_before=T0 + timedelta(days=8)) == 1
        _enqueue(storage, 1, start=2)
        with storage.transaction() as uow:
            status = uow.outbox.status()
        assert status.unbatched == status.undelivered_events == 1
        assert [e.payload for e in _freeze_and_claim(storage).events] == [{"n": 2}]

    def test_concurrent_claims_never_share_a_batch(self, storage: Any) -> None:
        _enqueue(storage, 40)
        claimed: list[list[str]] = []
        lock = threading.Lock()

        def worker() -> None:
            while True:
                batches = _claim(storage, size=3, batches=2)
                if not batches:
                    return
                with lock:
                    claimed.extend([b.id] + [e.event_id for e in b.events] for b in batches)

        assert run_together(worker, 4) == []
        batch_ids = [c[0] for c in claimed]
        event_ids = [e for c in claimed for e in c[1:]]
        assert len(batch_ids) == len(set(batch_ids))
        assert len(event_ids) == len(set(event_ids)) == 40

    def test_prune_deletes_only_old_delivered_batches(self, storage: Any) -> None:
        _enqueue(storage, 3)
        old, recent, failed = _claim(storage, size=1, batches=3)
        with storage.transaction() as uow:
            uow.outbox.settle_delivered([old.id], at=T0)
            uow.outbox.settle_delivered([recent.id], at=T0 + timedelta(days=2))
            uow.outbox.mark_failed(failed.id, error="x", at=T0)
            assert uow.outbox.prune_delivered(settled_before=T0 + timedelta(days=1)) == 1
            assert uow.outbox.get_batch(old.id) is None
            assert uow.outbox.get_batch(recent.id) is not None
            assert uow.outbox.get_batch(failed.id) is not None
            status = uow.outbox.status()
        assert status.batches["delivered"] == 1
        assert status.failed_events == 1

    def test_a_stale_claim_cannot_settle_a_newer_claim(self, storage: Any) -> None:
        _enqueue(storage, 1)
        stale = _freeze_and_claim(storage)
        later = T0 + LEASE + timedelta(seconds=1)
        with storage.transaction() as uow:
            uow.outbox.release_expired_leases(now=later)
        fresh = _freeze_and_claim(storage, now=later)
        assert fresh.id == stale.id
        with storage.transaction() as uow:
            assert not uow.outbox.schedule_retry(
                stale.id, error="late", next_attempt_at=later, lease_until=stale.lease_until
            )
            assert not uow.outbox.mark_failed(
                stale.id, error="late", at=later, lease_until=stale.lease_until
            )
            assert not uow.outbox.release_claims([stale.id], lease_until=stale.lease_until)
            assert uow.outbox.settle_delivered([fresh.id], at=later, lease_until=fresh.lease_until)
            assert uow.outbox.get_batch(fresh.id).state == "delivered"
