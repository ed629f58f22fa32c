"""The conformance suite of the published storage contract: a subscriber repository (the
built-in one, or a host's storage backend) inside the built-in store's unit of work.

Subclass :class:`SubscriberRepositoryConformance` and give it a ``storage`` fixture yielding a
``SqlStorage`` built on your storage backend, migrated and empty (docs/plugins.md, "Checking
your store: the conformance suite")."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from ..storage.outbox_records import NewEvent
from .conformance_subscriber_scan import SubscriberScanConformance
from .subscriber_samples import T0, make_subscriber_data
from .threads import run_together


class SubscriberRepositoryConformance(SubscriberScanConformance):
    """The subscriber repository (``uow.subscribers``) and the signup shortcut
    (``storage.add_subscriber``), with the outbox events and the rollback it shares with the
    built-in store's unit of work."""

    def _add(self, storage: Any, email: str, **overrides: Any) -> Any:
        with storage.transaction() as uow:
            record = uow.subscribers.add(make_subscriber_data(email, **overrides))
        assert record is not None
        return record

    def test_subscribers_add_and_read_back_every_field(self, storage: Any) -> None:
        data = make_subscriber_data(
            "full@example.org",
            first_name="Ada",
            last_name="Byron",
            zip="02134",
            phone="+1 555 0100",
            sms_enabled=True,
            status="confirmed",
            age_range="75_84",
            gender="self_described",
            gender_self="ünïcode",
            categories=("health", "food"),
            consent_source="paper",
            consent_collected_at=T0 - timedelta(days=1),
            confirmed_at=T0,
            profile_completed_at=T0,
        )
        with storage.transaction() as uow:
            added = uow.subscribers.add(data)
        assert added is not None and added.id > 0
        with storage.transaction(write=False) as uow:
            by_email = uow.subscribers.get_by_email("full@example.org")
            by_confirm = uow.subscribers.get_by_token("confirm", data.confirm_token)
            by_unsub = uow.subscribers.get_by_token("unsubscribe", data.unsubscribe_token)
            by_profile = uow.subscribers.get_by_token("profile", data.profile_token)
            assert uow.subscribers.get_by_token("confirm", data.profile_token) is None
            assert uow.subscribers.get_by_email("other@example.org") is None
        assert by_email == added == by_confirm == by_unsub == by_profile
        assert by_email is not None and by_email.categories == ("health", "food")
        assert by_email.created_at == T0  # microseconds kept

    def test_subscribers_add_refuses_a_taken_address(self, storage: Any) -> None:
        self._add(storage, "taken@example.org")
        with storage.transaction() as uow:
            assert uow.subscribers.add(make_subscriber_data("taken@example.org")) is None
            # The transaction is still usable after the refusal.
            assert uow.subscribers.add(make_subscriber_data("free@example.org")) is not None
        with storage.transaction(write=False) as uow:
            page = uow.subscribers.list_page(status=None, after_id=None, limit=10)
        assert [r.email for r in page] == ["taken@example.org", "free@example.org"]

    def test_subscribers_mark_announced_counts_from_the_last_announcement(
        self, storage: Any
    ) -> None:
        record = self._add(storage, "again@example.org")  # created (first announced) at T0
        day = timedelta(days=1)
        with storage.transaction() as uow:
            # Within a day of the signup itself: not recorded.
            assert not uow.subscribers.mark_announced(
                record.id, at=T0 + timedelta(hours=23), unless_since=T0 + timedelta(hours=23) - day
            )
            # A day after it: recorded, and the next day is counted from this one.
            assert uow.subscribers.mark_announced(record.id, at=T0 + day, unless_since=T0)
            assert not uow.subscribers.mark_announced(
                record.id, at=T0 + day + timedelta(hours=1), unless_since=T0 + timedelta(hours=1)
            )
        with storage.transaction() as uow:
            assert uow.subscribers.mark_announced(record.id, at=T0 + 2 * day, unless_since=T0 + day)
            assert not uow.subscribers.mark_announced(
                record.id + 1000, at=T0 + 3 * day, unless_since=T0 + 2 * day
            )
            # The record itself is untouched (the announcement is not part of the contact).
            assert uow.subscribers.get_by_email("again@example.org") == record

    def test_subscribers_concurrent_mark_announced_records_once(self, storage: Any) -> None:
        record = self._add(storage, "race@example.org")
        at, since = T0 + timedelta(days=2), T0 + timedelta(days=1)
        results: list[bool] = []

        def claim() -> None:
            with storage.transaction() as uow:
                results.append(uow.subscribers.mark_announced(record.id, at=at, unless_since=since))

        assert run_together(claim, 4) == []
        assert sorted(results) == [False, False, False, True]

    @pytest.mark.parametrize("event_count", [0, 1, 2, 3])
    def test_add_subscriber_stores_it_with_its_events_in_order(
        self, storage: Any, event_count: int
    ) -> None:
        data = make_subscriber_data("events@example.org", categories=("food",), zip="02134")
        events = [new_event(n, "key-events") for n in range(event_count)]
        record = storage.add_subscriber(data, events)
        assert record is not None and record.email == "events@example.org"
        with storage.transaction(write=False) as uow:
            assert uow.subscribers.get_by_email("events@example.org") == record
        queued = queued_events(storage)
        assert [(e.event_id, e.event_type, e.payload, e.occurred_at) for e in queued] == [
            (e.event_id, e.event_type, e.payload, e.occurred_at) for e in events
        ]
        with storage.transaction() as uow:  # the events carry the subscriber's key
            assert uow.outbox.discard_for_subscriber("key-events") == event_count

    def test_add_subscriber_with_a_taken_address_writes_nothing(self, storage: Any) -> None:
        first = storage.add_subscriber(
            make_subscriber_data("twice@example.org"), [new_event(0, "key-1")]
        )
        assert first is not None
        again = [new_event(n, "key-2") for n in (1, 2)]
        for count in (1, 2):
            data = make_subscriber_data("twice@example.org", first_name="Other")
            assert storage.add_subscriber(data, again[:count]) is None
        with storage.transaction(write=False) as uow:
            assert uow.subscribers.get_by_email("twice@example.org") == first
        assert [event.payload["n"] for event in queued_events(storage)] == [0]

    def test_subscribers_save_and_delete(self, storage: Any) -> None:
        record = self._add(storage, "s@example.org")
        changed = replace(
            record,
            status="unsubscribed",
            unsubscribed_at=T0,
            first_name="Sam",
            prefs=replace(record.prefs, local="weekly"),
            categories=("money",),
        )
        with storage.transaction() as uow:
            uow.subscribers.save(changed)
        with storage.transaction() as uow:
            assert uow.subscribers.get_by_email("s@example.org", lock=True) == changed
            assert uow.subscribers.delete(record.id) is True
            assert uow.subscribers.delete(record.id) is False
        with storage.transaction(write=False) as uow:
            assert uow.subscribers.get_by_email("s@example.org") is None
            assert uow.subscribers.get_by_token("confirm", record.confirm_token) is None

    def test_subscribers_list_page_is_keyset_by_id_with_status_filter(self, storage: Any) -> None:
        statuses = ["pending", "confirmed", "pending", "bounced", "pending", "unsubscribed"]
        ids = [self._add(storage, f"l{i}@example.org", status=s).id for i, s in enumerate(statuses)]
        assert ids == sorted(ids)
        with storage.transaction(write=False) as uow:
            repo = uow.subscribers
            first = repo.list_page(status=None, after_id=None, limit=4)
            rest = repo.list_page(status=None, after_id=first[-1].id, limit=4)
            pending = repo.list_page(status="pending", after_id=ids[0], limit=10)
            none = repo.list_page(status="confirmed", after_id=ids[1], limit=10)
        assert [r.id for r in first + rest] == ids
        assert [r.email for r in pending] == ["l2@example.org", "l4@example.org"]
        assert none == []

    def test_subscribers_find_by_prefix_is_keyset_by_email_and_literal(self, storage: Any) -> None:
        """Code-point order (a Python sort), whatever the database's collation: on PostgreSQL a
        store whose email column compares linguistically fails here when the suite runs on a
        database created with such a collation (ICU ``en-US``, libc ``en_US.UTF-8``)."""
        emails = [
            "a%b@example.org",
            "a_b@example.org",
            "a\\b@example.org",
            "aab@example.org",
            "ab@example.org",
            "ac@example.org",
            "b@example.org",
            "\u00e4b@example.org",
        ]
        for email in reversed(emails):
            self._add(storage, email)
        with storage.transaction(write=False) as uow:
            repo = uow.subscribers
            everyone = repo.find_by_prefix("", after_email=None, limit=20)
            a_first = repo.find_by_prefix("a", after_email=None, limit=3)
            a_rest = repo.find_by_prefix("a", after_email=a_first[-1].email, limit=3)
            a_end = repo.find_by_prefix("a", after_email=a_rest[-1].email, limit=3)
            percent = repo.find_by_prefix("a%", after_email=None, limit=20)
            underscore = repo.find_by_prefix("a_", after_email=None, limit=20)
            backslash = repo.find_by_prefix("a\\", after_email=None, limit=20)
            exact = repo.find_by_prefix("ab@example.org", after_email=None, limit=20)
            umlaut = repo.find_by_prefix("\u00e4", after_email=None, limit=20)
            none = repo.find_by_prefix("z", after_email=None, limit=20)
        assert [r.email for r in everyone] == sorted(emails)
        expected_a = sorted(e for e in emails if e.startswith("a"))
        assert [r.email for r in a_first + a_rest + a_end] == expected_a
        assert len(a_first) == 3 and len(a_end) == len(expected_a) - 6
        assert [r.email for r in percent] == ["a%b@example.org"]
        assert [r.email for r in underscore] == ["a_b@example.org"]
        assert [r.email for r in backslash] == ["a\\b@example.org"]
        assert [r.email for r in exact] == ["ab@example.org"]
        assert [r.email for r in umlaut] == ["\u00e4b@example.org"]
        assert everyone[0] == self._get(storage, everyone[0].email)
        assert none == []

    def _get(self, storage: Any, email: str) -> Any:
        with storage.transaction(write=False) as uow:
            return uow.subscribers.get_by_email(email)

    def test_subscribers_rollback_leaves_nothing(self, storage: Any) -> None:
        with pytest.raises(RuntimeError), storage.transaction() as uow:
            uow.subscribers.add(make_subscriber_data("gone@example.org"))
            raise RuntimeError("abort")
        with storage.transaction(write=False) as uow:
            assert uow.subscribers.get_by_email("gone@example.org") is None

    def test_subscribers_uncommitted_insert_cannot_be_overtaken(self, storage: Any) -> None:
        """A later signup never becomes visible before an earlier, still open one, so a keyset
        walk cannot pass an id that commits afterwards."""
        opened = threading.Event()

        def slow() -> None:
            with storage.transaction() as uow:
                uow.subscribers.add(make_subscriber_data("slow@example.org"))
                opened.set()
                time.sleep(0.4)

        slow_thread = threading.Thread(target=slow)
        slow_thread.start()
        assert opened.wait(5)
        fast_thread = threading.Thread(target=self._add, args=(storage, "fast@example.org"))
        fast_thread.start()
        time.sleep(0.2)
        visible = _listed_emails(storage)
        slow_thread.join()
        fast_thread.join()
        assert visible in ([], ["slow@example.org"], ["slow@example.org", "fast@example.org"])
        assert _listed_emails(storage) == ["slow@example.org", "fast@example.org"]

    def test_count_by_status(self, storage: Any) -> None:
        statuses = ("confirmed", "confirmed", "pending", "unsubscribed", "bounced")
        with storage.transaction() as uow:
            assert uow.subscribers.count() == 0
            assert uow.subscribers.count(status="confirmed") == 0
            for n, status in enumerate(statuses):
                added = uow.subscribers.add(make_subscriber_data(f"count{n}@example.org"))
                assert added is not None
                uow.subscribers.save(replace(added, status=status))
        with storage.transaction(write=False) as uow:
            assert uow.subscribers.count() == 5
            assert uow.subscribers.count(status="confirmed") == 2
            assert uow.subscribers.count(status="bounced") == 1

    def test_changes_per_day_counts_each_stamp_on_its_utc_day(self, storage: Any) -> None:
        day = datetime(2026, 3, 1)
        rows = [
            ("a@example.org", day, None, None),
            ("b@example.org", day + timedelta(hours=23, minutes=59), day + timedelta(days=2), None),
            ("c@example.org", day + timedelta(days=1), None, day + timedelta(days=2, hours=1)),
            ("before@example.org", day - timedelta(microseconds=1), None, None),
            ("after@example.org", day + timedelta(days=3), day + timedelta(days=3), None),
        ]
        for email, created, unsubscribed, bounced in rows:
            status = "bounced" if bounced else "unsubscribed" if unsubscribed else "confirmed"
            data = make_subscriber_data(
                email,
                created_at=created,
                updated_at=created,
                status=status,
                unsubscribed_at=unsubscribed,
                bounced_at=bounced,
            )
            assert storage.add_subscriber(data, []) is not None
        with storage.transaction(write=False) as uow:
            days = uow.subscribers.changes_per_day(
                first=day.date(), last=(day + timedelta(days=2)).date()
            )
        assert [(d.day, d.signups, d.unsubscribes, d.bounces) for d in days] == [
            (day.date(), 2, 0, 0),
            ((day + timedelta(days=1)).date(), 1, 0, 0),
            ((day + timedelta(days=2)).date(), 0, 1, 1),
        ]
        with storage.transaction(write=False) as uow:
            assert (
                uow.subscribers.changes_per_day(first=date(2025, 1, 1), last=date(2025, 1, 31))
                == []
            )

    def test_changes_per_day_over_a_long_range_and_a_single_day(self, storage: Any) -> None:
        first = date(2025, 1, 1)
        stamped = [
            first,
            first + timedelta(days=99),
            first + timedelta(days=100),
            date(2025, 12, 31),
        ]
        for n, day in enumerate(stamped):
            created = datetime.combine(day, datetime.min.time()) + timedelta(hours=n)
            data = make_subscriber_data(f"long{n}@example.org", created_at=created)
            assert storage.add_subscriber(data, []) is not None
        with storage.transaction(write=False) as uow:
            year = uow.subscribers.changes_per_day(first=first, last=date(2025, 12, 31))
            one = uow.subscribers.changes_per_day(first=stamped[2], last=stamped[2])
        assert [(d.day, d.signups) for d in year] == [(day, 1) for day in stamped]
        assert [(d.day, d.signups) for d in one] == [(stamped[2], 1)]


def new_event(n: int, key: str | None) -> NewEvent:
    """A distinct event: its payload says ``n``, it occurred ``n`` seconds after ``T0``."""
    return NewEvent(
        event_id=str(uuid.uuid4()),
        event_type="newsletter.signup" if n % 2 == 0 else "newsletter.confirmed",
        occurred_at=T0 + timedelta(seconds=n),
        payload={"n": n, "email": "x@example.org"},
        subscriber_key=key,
        created_at=T0 + timedelta(seconds=n),
    )


def _listed_emails(storage: Any) -> list[str]:
    with storage.transaction(write=False) as uow:
        return [r.email for r in uow.subscribers.list_page(status=None, after_id=None, limit=5)]


def queued_events(storage: Any) -> list[Any]:
    """Every queued event, in queue order, through a claim that is released again."""
    lease_until = T0 + timedelta(minutes=1)
    with storage.transaction() as uow:
        batches = uow.outbox.claim_batches(
            now=T0, lease_until=lease_until, batch_size=100, max_batches=10
        )
        uow.outbox.release_claims([batch.id for batch in batches], lease_until=lease_until)
    return [event for batch in batches for event in batch.events]
