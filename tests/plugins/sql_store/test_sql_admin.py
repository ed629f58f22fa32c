"""The built-in store's admin users, sessions, audit record and message handling."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.storage.access_records import AdminSessionRecord

T0 = datetime(2026, 1, 2, 3, 4, 5)
#: Stand-ins for argon2id hashes: the store keeps whatever string it is given.
HASHES = ("$argon2id$a", "$argon2id$b", "old", "new")


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def _session(digest: str, username: str = "ada", **times: datetime) -> AdminSessionRecord:
    return AdminSessionRecord(
        token_digest=digest,
        username=username,
        csrf_token="c" * 43,
        created_at=times.get("created_at", T0),
        last_seen_at=times.get("last_seen_at", T0),
    )


class TestSqlAdmin:
    """The admin repositories: users, sessions and the audit record."""

    def test_admin_users_have_a_role_that_can_change(self, storage: Any) -> None:
        with storage.transaction() as uow:
            for name, role in (("ada", "owner"), ("bob", "editor"), ("cy", "editor")):
                uow.admin_users.add(
                    username=name, password_hash=HASHES[0], role=role, created_at=T0
                )
        with storage.transaction() as uow:
            assert [user.role for user in uow.admin_users.list()] == ["owner", "editor", "editor"]
            assert uow.admin_users.count(role="owner") == 1
            assert uow.admin_users.count(role="editor") == 2
            assert uow.admin_users.set_role("bob", "owner") is True
            assert uow.admin_users.set_role("nobody", "owner") is False
        with storage.transaction(write=False) as uow:
            assert uow.admin_users.get("bob").role == "owner"
            assert uow.admin_users.count(role="owner") == 2
            assert uow.admin_users.count() == 3

    def test_counting_a_role_in_a_write_holds_its_users_until_it_ends(self, storage: Any) -> None:
        """Two admins each demoting one of the last two owners at once: the second count waits
        for the first transaction and then sees the one owner it left."""
        with storage.transaction() as uow:
            for name in ("ada", "bob"):
                uow.admin_users.add(
                    username=name, password_hash=HASHES[0], role="owner", created_at=T0
                )
        seen: list[int] = []

        def second() -> None:
            with storage.transaction() as uow:
                seen.append(uow.admin_users.count(role="owner"))

        other = threading.Thread(target=second)
        with storage.transaction() as uow:
            assert uow.admin_users.count(role="owner") == 2
            other.start()
            time.sleep(0.5)  # time for the other transaction to count, were it free to
            assert seen == []
            uow.admin_users.set_role("bob", "editor")
        other.join(10)
        assert seen == [1]

    def test_message_handling_marks_once_and_goes_with_the_message(self, storage: Any) -> None:
        later = T0 + timedelta(hours=1)
        with storage.transaction() as uow:
            ids = [
                uow.messages.add(email=email, name=None, message="m", submitted_at=T0).id
                for email in ("a@example.org", "b@example.org", "c@example.org")
            ]
            assert uow.message_handling.mark(ids[1], by="ada", at=T0) is not None
            assert uow.message_handling.mark(max(ids) + 1, by="ada", at=T0) is None
        with storage.transaction() as uow:
            again = uow.message_handling.mark(ids[1], by="bob", at=later)
            assert (again.handled_by, again.handled_at) == ("ada", T0)  # the first mark stays
            assert set(uow.message_handling.of(ids)) == {ids[1]}
            assert uow.message_handling.of([]) == {}
            unhandled = uow.message_handling.unhandled_page_desc(before_id=None, limit=5)
            assert [record.id for record in unhandled] == [ids[2], ids[0]]
            older = uow.message_handling.unhandled_page_desc(before_id=ids[2], limit=5)
            assert [record.id for record in older] == [ids[0]]
            assert uow.message_handling.clear(ids[1]) is True
            assert uow.message_handling.clear(ids[1]) is False
            uow.message_handling.mark(ids[0], by="ada", at=T0)
        with storage.transaction() as uow:
            assert uow.messages.delete_from("a@example.org") == 1
        with storage.transaction(write=False) as uow:
            assert uow.message_handling.of(ids) == {}
            assert uow.messages.list_page_desc(before_id=None, limit=5)[0].id == ids[2]

    def test_admin_password_hash_replaced_and_user_deleted(self, storage: Any) -> None:
        with storage.transaction() as uow:
            uow.admin_users.add(
                username="ada", password_hash=HASHES[2], role="owner", created_at=T0
            )
        with storage.transaction() as uow:
            assert uow.admin_users.set_password_hash("ada", HASHES[3]) is True
            assert uow.admin_users.set_password_hash("nobody", HASHES[3]) is False
        with storage.transaction() as uow:
            assert uow.admin_users.get("ada").password_hash == HASHES[3]
            assert uow.admin_users.delete("ada") is True
            assert uow.admin_users.delete("ada") is False
            assert uow.admin_users.get("ada") is None

    def test_admin_sessions_stored_touched_and_deleted(self, storage: Any) -> None:
        later = T0 + timedelta(minutes=5)
        with storage.transaction() as uow:
            uow.admin_sessions.add(_session("1" * 64))
            uow.admin_sessions.add(_session("2" * 64))
            uow.admin_sessions.add(_session("3" * 64, username="bob"))
        with storage.transaction() as uow:
            uow.admin_sessions.touch("1" * 64, at=later)
        with storage.transaction() as uow:
            assert uow.admin_sessions.get("1" * 64) == _session("1" * 64, last_seen_at=later)
            assert uow.admin_sessions.get("f" * 64) is None
            assert uow.admin_sessions.delete("2" * 64) is True
            assert uow.admin_sessions.delete("2" * 64) is False
            assert uow.admin_sessions.delete_for_user("ada") == 1
            assert uow.admin_sessions.get("1" * 64) is None
            assert uow.admin_sessions.get("3" * 64) is not None

    def test_admin_sessions_pruned_by_idle_or_age(self, storage: Any) -> None:
        with storage.transaction() as uow:
            uow.admin_sessions.add(_session("1" * 64, last_seen_at=T0))
            uow.admin_sessions.add(
                _session("2" * 64, created_at=T0, last_seen_at=T0 + timedelta(hours=3))
            )
            uow.admin_sessions.add(
                _session(
                    "3" * 64,
                    created_at=T0 + timedelta(hours=1),
                    last_seen_at=T0 + timedelta(hours=3),
                )
            )
        with storage.transaction() as uow:
            pruned = uow.admin_sessions.prune(
                seen_before=T0 + timedelta(hours=1), created_before=T0 + timedelta(minutes=30)
            )
            assert pruned == 2
            assert uow.admin_sessions.get("3" * 64) is not None

    def test_admin_audit_latest_newest_first_by_keyset(self, storage: Any) -> None:
        with storage.transaction() as uow:
            ids = [
                uow.admin_audit.add(
                    at=T0 + timedelta(seconds=n),
                    actor="ada",
                    action="api_key.create",
                    target=f"key-{n}",
                    client_hash=None if n else "h" * 64,
                )
                for n in range(5)
            ]
        assert ids == sorted(ids) and len(set(ids)) == 5
        with storage.transaction(write=False) as uow:
            first = uow.admin_audit.latest(2)
            assert [act.target for act in first] == ["key-4", "key-3"]
            rest = uow.admin_audit.latest(10, before_id=first[-1].id)
            assert [act.target for act in rest] == ["key-2", "key-1", "key-0"]
            assert rest[-1].client_hash == "h" * 64 and rest[-1].action == "api_key.create"
            assert rest[-1].at == T0 and rest[-1].actor == "ada"

    def test_admin_audit_replace_target_renames_only_that_target_clearing_its_detail(
        self, storage: Any
    ) -> None:
        with storage.transaction() as uow:
            for n, target in enumerate(["a@example.org", "b@example.org", "a@example.org", None]):
                uow.admin_audit.add(
                    at=T0 + timedelta(seconds=n),
                    actor="ada",
                    action="subscriber.unsubscribe",
                    target=target,
                    client_hash=None,
                )
        with storage.transaction() as uow:
            uow.admin_audit.add(
                at=T0,
                actor="ada",
                action="subscriber.edit",
                target="b@example.org",
                client_hash=None,
                detail="text messages turned on; consent: by phone",
            )
            [latest] = uow.admin_audit.latest(1)
            assert latest.detail == "text messages turned on; consent: by phone"
            assert uow.admin_audit.replace_target("b@example.org", "h" * 64) == 2
            assert uow.admin_audit.latest(1)[0].detail is None
        with storage.transaction() as uow:
            assert uow.admin_audit.replace_target("a@example.org", "k" * 64) == 2
            assert uow.admin_audit.replace_target("nobody@example.org", "x") == 0
        with storage.transaction(write=False) as uow:
            targets = [act.target for act in uow.admin_audit.latest(10)]
        assert targets == ["h" * 64, None, "k" * 64, "h" * 64, "k" * 64]

    def test_admin_audit_latest_about_one_target_newest_first(self, storage: Any) -> None:
        with storage.transaction() as uow:
            for n, target in enumerate(["a@example.org", "b@example.org", "a@example.org"] * 2):
                uow.admin_audit.add(
                    at=T0 + timedelta(seconds=n),
                    actor=f"admin-{n}",
                    action="subscriber.edit",
                    target=target,
                    client_hash=None,
                )
        with storage.transaction(write=False) as uow:
            about = uow.admin_audit.latest_about("a@example.org", limit=3)
            assert [act.actor for act in about] == ["admin-5", "admin-3", "admin-2"]
            assert {act.target for act in about} == {"a@example.org"}
            assert uow.admin_audit.latest_about("nobody@example.org", limit=3) == []
