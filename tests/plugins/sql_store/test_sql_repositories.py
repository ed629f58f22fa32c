"""The built-in store's unit of work, API keys, settings, platform connection, outbox queue,
erasure evidence and contact messages."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.testing.conformance_subscribers import new_event


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


T0 = datetime(2026, 1, 2, 3, 4, 5)


def _connect(uow: Any, platform_base: str, transport: str, token: str, at: datetime) -> Any:
    return uow.connections.replace(
        platform_base=platform_base, transport=transport, token=token, at=at
    )


class TestSqlApiKeys:
    """The API keys (``uow.keys``) and the key shortcuts of ``SqlStorage``."""

    def test_keys_add_find_list(self, storage: Any) -> None:
        with storage.transaction() as uow:
            first = uow.keys.add(label="a", key_prefix="nlk_aaaa", key_digest="d1", created_at=T0)
            second = uow.keys.add(label="b", key_prefix="nlk_bbbb", key_digest="d2", created_at=T0)
        assert first != second
        with storage.transaction(write=False) as uow:
            found = uow.keys.find_active_by_digest("d2")
            assert found is not None and found.label == "b" and found.id == second
            assert uow.keys.find_active_by_digest("nope") is None
            assert [k.label for k in uow.keys.list()] == ["a", "b"]

    def test_keys_find_active_outside_a_unit_of_work(self, storage: Any) -> None:
        """``SqlStorage.find_active_api_key`` answers as the repository does, and sees a
        revocation as soon as it commits."""
        with storage.transaction() as uow:
            kept = uow.keys.add(label="kept", key_prefix="nlk_k", key_digest="dk", created_at=T0)
            uow.keys.add(label="gone", key_prefix="nlk_g", key_digest="dg", created_at=T0)
        found = storage.find_active_api_key("dk")
        with storage.transaction(write=False) as uow:
            assert found == uow.keys.find_active_by_digest("dk")
        assert found is not None and found.id == kept and found.label == "kept"
        assert found.key_prefix == "nlk_k" and found.created_at == T0 and found.active
        assert storage.find_active_api_key("dg") is not None
        with storage.transaction() as uow:
            uow.keys.revoke("gone", at=T0 + timedelta(minutes=1))
        assert storage.find_active_api_key("dg") is None
        assert storage.find_active_api_key("unknown") is None

    def test_keys_record_the_last_day_of_use(self, storage: Any) -> None:
        with storage.transaction() as uow:
            key_id = uow.keys.add(label="u", key_prefix="nlk_u", key_digest="du", created_at=T0)
            other = uow.keys.add(label="o", key_prefix="nlk_o", key_digest="do", created_at=T0)
        assert storage.find_active_api_key("du").last_used_on is None
        day = T0.date()
        with storage.transaction() as uow:
            uow.keys.mark_used(key_id, on=day + timedelta(days=1))
            uow.keys.mark_used(key_id, on=day)  # an earlier day never overwrites a later one
        with storage.transaction(write=False) as uow:
            used = {k.label: k.last_used_on for k in uow.keys.list()}
            assert uow.keys.find_active_by_digest("du").last_used_on == day + timedelta(days=1)
        assert used == {"u": day + timedelta(days=1), "o": None}
        assert storage.find_active_api_key("du").last_used_on == day + timedelta(days=1)
        storage.record_api_key_use(other, on=day)  # the one-call shortcut, committed
        with storage.transaction(write=False) as uow:
            assert {k.label: k.last_used_on for k in uow.keys.list()}["o"] == day

    def test_keys_revoke_by_label_or_id(self, storage: Any) -> None:
        with storage.transaction() as uow:
            uow.keys.add(label="one", key_prefix="nlk_1", key_digest="d1", created_at=T0)
            two = uow.keys.add(label="two", key_prefix="nlk_2", key_digest="d2", created_at=T0)
        later = T0 + timedelta(hours=1)
        with storage.transaction() as uow:
            revoked = uow.keys.revoke("one", at=later)
            assert revoked is not None and revoked.revoked_at == later
            assert uow.keys.revoke(str(two), at=later) is not None
            assert uow.keys.revoke("missing", at=later) is None
        with storage.transaction() as uow:
            again = uow.keys.revoke("one", at=later + timedelta(hours=1))
            assert again is not None and again.revoked_at == later  # first revocation kept
            assert uow.keys.find_active_by_digest("d1") is None
            assert uow.keys.find_active_by_digest("d2") is None
            assert all(not k.active for k in uow.keys.list())


class TestSqlSettings:
    """The stored settings (``uow.settings``)."""

    def test_settings_put_replace_delete(self, storage: Any) -> None:
        with storage.transaction() as uow:
            assert uow.settings.get("k") is None
            uow.settings.put("k", {"a": [1, 2]}, at=T0)
            uow.settings.put("k", {"a": [3]}, at=T0)
        with storage.transaction() as uow:
            assert uow.settings.get("k") == {"a": [3]}
            assert uow.settings.delete("k") is True
            assert uow.settings.delete("k") is False
            assert uow.settings.get("k") is None

    def test_settings_put_if_absent_keeps_first(self, storage: Any) -> None:
        with storage.transaction() as uow:
            assert uow.settings.put_if_absent("secret", "first", at=T0) == "first"
        with storage.transaction() as uow:
            assert uow.settings.put_if_absent("secret", "second", at=T0) == "first"


class TestSqlConnections:
    """The platform connection (``uow.connections``) and its shortcut."""

    def test_connection_replace_and_disable(self, storage: Any) -> None:
        with storage.transaction(write=False) as uow:
            assert uow.connections.active() is None
        with storage.transaction() as uow:
            first = _connect(uow, "https://a.example", "events", "t" * 20, T0)
            second = _connect(uow, "https://b.example", "platform", "u" * 20, T0)
        assert first.id != second.id
        assert "u" * 20 not in repr(second)
        with storage.transaction() as uow:
            active = uow.connections.active()
            assert active is not None and active.platform_base == "https://b.example"
            assert active.token == "u" * 20
            assert uow.connections.disable(at=T0) is True
            assert uow.connections.disable(at=T0) is False
            assert uow.connections.active() is None

    def test_connection_find_active_outside_a_unit_of_work(self, storage: Any) -> None:
        """``SqlStorage.find_active_connection`` answers as the repository does (every field),
        and sees a replacement and a disabling as soon as they commit."""
        assert storage.find_active_connection() is None
        with storage.transaction() as uow:
            first = _connect(uow, "https://a.example", "events", "t" * 20, T0)
        found = storage.find_active_connection()
        with storage.transaction(write=False) as uow:
            assert found == uow.connections.active() == first
        assert found is not None and found.created_at == T0 and found.disabled_at is None
        later = T0 + timedelta(minutes=1)
        with storage.transaction() as uow:
            second = _connect(uow, "https://b.example", "platform", "u" * 20, later)
        found = storage.find_active_connection()
        assert found == second and found is not None and found.token == "u" * 20
        with storage.transaction() as uow:
            uow.connections.disable(at=later)
        assert storage.find_active_connection() is None


class TestSqlOutboxQueue:
    """The outbox (``uow.outbox``): queueing with the change, erasure, and the runner's part."""

    def test_outbox_discard_for_subscriber(self, storage: Any) -> None:
        with storage.transaction() as uow:
            for n, key in enumerate(["k1", "k1", "k2", None]):
                uow.outbox.enqueue(**asdict(new_event(n, key)))
        with storage.transaction() as uow:
            assert uow.outbox.discard_for_subscriber("k1") == 2
        with storage.transaction() as uow:
            assert uow.outbox.discard_for_subscriber("k1") == 0
            assert uow.outbox.discard_for_subscriber("k2") == 1

    def test_outbox_enqueue_rolls_back_with_its_transaction(self, storage: Any) -> None:
        with pytest.raises(RuntimeError), storage.transaction() as uow:
            uow.outbox.enqueue(**asdict(new_event(5, "k3")))
            raise RuntimeError("the state change failed")
        with storage.transaction() as uow:
            assert uow.outbox.discard_for_subscriber("k3") == 0


class TestSqlDeletions:
    """The erasure evidence (``uow.deletions``)."""

    def test_deletions_add_and_find(self, storage: Any) -> None:
        rows = [("h1", "confirmed", 2, 3), ("h2", "pending", 0, 0), ("h1", None, 0, 1)]
        with storage.transaction() as uow:  # None: the address had no subscriber
            first, _, second = [
                uow.deletions.add(
                    email_hmac=email_hmac,
                    previous_status=previous,
                    deleted_at=T0,
                    discarded_events=discarded,
                    erased_messages=erased,
                )
                for email_hmac, previous, discarded, erased in rows
            ]
        with storage.transaction(write=False) as uow:
            found = uow.deletions.find("h1")
            assert uow.deletions.find("nope") == []
        assert found == [first, second]
        assert found[0].previous_status == "confirmed" and found[0].discarded_events == 2
        assert found[0].erased_messages == 3
        assert found[1].previous_status is None and found[1].erased_messages == 1


class TestSqlContactMessages:
    """The contact-form log (``uow.messages``)."""

    def test_messages_are_a_lossless_log_in_arrival_order(self, storage: Any) -> None:
        with storage.transaction() as uow:
            a = uow.messages.add(email="a@example.org", name=None, message="one", submitted_at=T0)
            b = uow.messages.add(email="a@example.org", name="A", message="one", submitted_at=T0)
            c = uow.messages.add(email="c@example.org", name="C", message="ü", submitted_at=T0)
        assert a.id < b.id < c.id
        with storage.transaction(write=False) as uow:
            first = uow.messages.list_page(after_id=None, limit=2)
            rest = uow.messages.list_page(after_id=first[-1].id, limit=2)
        assert first + rest == [a, b, c]
        assert rest[0].message == "ü" and first[0].name is None

    def test_messages_list_page_desc_walks_newest_first(self, storage: Any) -> None:
        with storage.transaction() as uow:
            added = [
                uow.messages.add(
                    email=f"m{n}@example.org", name=None, message="hi", submitted_at=T0
                )
                for n in range(5)
            ]
        with storage.transaction(write=False) as uow:
            first = uow.messages.list_page_desc(before_id=None, limit=2)
            second = uow.messages.list_page_desc(before_id=first[-1].id, limit=2)
            last = uow.messages.list_page_desc(before_id=second[-1].id, limit=2)
            after_last = uow.messages.list_page_desc(before_id=added[0].id, limit=2)
        assert first + second + last == list(reversed(added))
        assert len(last) == 1 and after_last == []

    def test_messages_delete_from_erases_only_that_senders(self, storage: Any) -> None:
        with storage.transaction() as uow:
            for email in ("a@example.org", "b@example.org", "a@example.org"):
                uow.messages.add(email=email, name=None, message="hi", submitted_at=T0)
        with storage.transaction() as uow:
            assert uow.messages.delete_from("a@example.org") == 2
            assert uow.messages.delete_from("nobody@example.org") == 0
        with storage.transaction(write=False) as uow:
            left = uow.messages.list_page(after_id=None, limit=10)
        assert [m.email for m in left] == ["b@example.org"]
