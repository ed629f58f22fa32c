"""The built-in store's record of platform feedback and of suppressions."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.storage.records import FeedbackRecord
from newsletter_connector.testing.conformance_subscribers import new_event, queued_events
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from newsletter_connector.testing.threads import run_together

T0 = datetime(2026, 1, 2, 3, 4, 5)
KEY_A = "a" * 64
KEY_B = "b" * 64


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def _item(feedback_id: str, key: str | None = KEY_A, **changes: Any) -> FeedbackRecord:
    item = FeedbackRecord(
        id=feedback_id,
        kind="bounce",
        email_hmac=key,
        reason="550 5.1.1 user unknown",
        occurred_at=T0,
        received_at=T0 + timedelta(minutes=1),
        outcome="unchanged",
    )
    return replace(item, **changes)


class TestSqlFeedback:
    """The platform feedback and suppressions (``uow.feedback``)."""

    def test_feedback_is_claimed_once_and_kept_with_its_outcome(self, storage: Any) -> None:
        first = _item("fb-1")
        with storage.transaction() as uow:
            assert uow.feedback.claim(first) is True
            assert uow.feedback.claim(replace(first, kind="complaint")) is False
            uow.feedback.set_outcome("fb-1", "bounced")
        with storage.transaction() as uow:
            assert uow.feedback.claim(first) is False  # a retry, in a later unit of work
            assert uow.feedback.history(KEY_A) == [replace(first, outcome="bounced")]

    def test_a_rolled_back_claim_can_be_claimed_again(self, storage: Any) -> None:
        with pytest.raises(RuntimeError), storage.transaction() as uow:
            assert uow.feedback.claim(_item("fb-rolled-back")) is True
            raise RuntimeError("abort")
        with storage.transaction() as uow:
            assert uow.feedback.claim(_item("fb-rolled-back")) is True

    def test_feedback_history_is_per_address_oldest_first(self, storage: Any) -> None:
        later = T0 + timedelta(hours=1)
        with storage.transaction() as uow:
            uow.feedback.claim(_item("fb-late", received_at=later, kind="complaint"))
            uow.feedback.claim(_item("fb-early"))
            uow.feedback.claim(_item("fb-other", key=KEY_B))
        with storage.transaction(write=False) as uow:
            assert [item.id for item in uow.feedback.history(KEY_A)] == ["fb-early", "fb-late"]
            assert [item.id for item in uow.feedback.history(KEY_B)] == ["fb-other"]
            assert uow.feedback.history("c" * 64) == []

    def test_concurrent_claims_of_one_item_store_it_once(self, storage: Any) -> None:
        won: list[bool] = []

        def claim() -> None:
            with storage.transaction() as uow:
                won.append(uow.feedback.claim(_item("fb-race")))

        assert run_together(claim, 4) == []
        assert sorted(won) == [False, False, False, True]

    def test_a_suppression_keeps_its_first_report_until_lifted(self, storage: Any) -> None:
        with storage.transaction() as uow:
            assert uow.feedback.suppression(KEY_A) is None
            uow.feedback.suppress(email_hmac=KEY_A, kind="complaint", occurred_at=T0, at=T0)
            later = T0 + timedelta(days=1)
            uow.feedback.suppress(email_hmac=KEY_A, kind="bounce", occurred_at=later, at=later)
        with storage.transaction(write=False) as uow:
            kept = uow.feedback.suppression(KEY_A)
            assert (kept.email_hmac, kept.kind, kept.occurred_at, kept.recorded_at) == (
                KEY_A,
                "complaint",
                T0,
                T0,
            )
            assert uow.feedback.suppression(KEY_B) is None
        with storage.transaction() as uow:
            assert uow.feedback.lift(KEY_A) is True
            assert uow.feedback.lift(KEY_A) is False
            assert uow.feedback.suppression(KEY_A) is None

    def test_forgetting_an_address_keeps_its_items_claimed_but_anonymous(
        self, storage: Any
    ) -> None:
        with storage.transaction() as uow:
            uow.feedback.claim(_item("fb-a1"))
            uow.feedback.claim(_item("fb-a2", kind="unsubscribe"))
            uow.feedback.claim(_item("fb-b1", key=KEY_B))
            uow.feedback.suppress(email_hmac=KEY_A, kind="bounce", occurred_at=T0, at=T0)
        with storage.transaction() as uow:
            assert uow.feedback.forget(KEY_A) == 2
        with storage.transaction() as uow:
            assert uow.feedback.history(KEY_A) == []
            assert uow.feedback.suppression(KEY_A) is None
            assert uow.feedback.claim(_item("fb-a1")) is False  # a late retry is still known
            assert [item.reason for item in uow.feedback.history(KEY_B)] == [
                "550 5.1.1 user unknown"
            ]

    @pytest.mark.parametrize("event_count", [0, 1, 2, 3])
    def test_add_subscriber_writes_nothing_for_a_suppressed_address(
        self, storage: Any, event_count: int
    ) -> None:
        with storage.transaction() as uow:
            uow.feedback.suppress(email_hmac=KEY_A, kind="complaint", occurred_at=T0, at=T0)
        events = [new_event(n, KEY_A) for n in range(event_count)]
        data = make_subscriber_data("suppressed@example.org")
        assert storage.add_subscriber(data, events, unless_suppressed=KEY_A) is None
        with storage.transaction(write=False) as uow:
            assert uow.subscribers.get_by_email("suppressed@example.org") is None
        assert queued_events(storage) == []
        # Another key (or none) is no obstacle.
        added = storage.add_subscriber(data, events, unless_suppressed=KEY_B)
        assert added is not None and added.email == "suppressed@example.org"
        assert len(queued_events(storage)) == event_count
