"""The admin area's twins of CLI acts, over HTTP on both databases: the failed outbox batches
(keyset-paged, each replayed alone), the digest form (kind and date) and Settings → Admin
users. Each act calls the CLI's service method, is CSRF-checked, audited (never a password)
and post/redirect/get; a refused request changes nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import falcon.testing
import pytest
from click.testing import CliRunner

from newsletter_connector import hookimpl
from newsletter_connector.cli import cli
from newsletter_connector.descriptors import AdminUser
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.context import sha256_hex
from newsletter_connector.service.events import queue_event
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin import outbox_failed
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.app import create_app
from tests.support.admin import (
    PASSWORD,
    T0,
    audit_acts,
    csrf_token,
    followed,
    get_page,
    post_form,
    sign_in,
    submit,
    without_token,
)
from tests.support.pages_helpers import FORM, ORIGIN

FAILED = "/admin/settings/outbox/failed"
FAILED_REPLAY = "/admin/settings/outbox/failed/replay"


def _act(client: Any, page: str, path: str, session: str, fields: dict[str, str]) -> Any:
    """Post ``fields`` to ``path`` with the CSRF token of ``page``'s forms."""
    return submit(client, path, session, fields, form=page)


# -- failed outbox batches ------------------------------------------------------------------


def _batches(service: Any, failed: int, *, waiting: int = 0) -> tuple[list[str], list[str]]:
    """``failed`` failed batches and ``waiting`` ones waiting for a retry (one event each);
    their ids, in id order."""
    with service.storage.transaction() as uow:
        for n in range(failed + waiting):
            queue_event(uow, service.context, "contact.message", {"n": n})
    before = T0 - timedelta(minutes=5)
    with service.storage.transaction() as uow:
        claimed = uow.outbox.claim_batches(
            now=before,
            lease_until=before + timedelta(minutes=1),
            batch_size=1,
            max_batches=failed + waiting,
        )
        for batch in claimed[:failed]:
            uow.outbox.mark_failed(batch.id, error=f"HTTP 400 <{batch.id}>", at=before)
        for batch in claimed[failed:]:
            uow.outbox.schedule_retry(
                batch.id, error="HTTP 503", next_attempt_at=T0 + timedelta(hours=6)
            )
    return (
        sorted(batch.id for batch in claimed[:failed]),
        sorted(batch.id for batch in claimed[failed:]),
    )


def _state(service: Any, batch_id: str) -> str:
    with service.storage.transaction(write=False) as uow:
        return uow.outbox.get_batch(batch_id).state


def test_the_settings_page_links_to_the_failed_batches(client: Any, session: str) -> None:
    page = get_page(client, "/admin/settings", session)
    assert f'href="{BASE}{FAILED}" id="failed-batches-link"' in page.text


def test_failed_batches_are_listed_by_id_and_paged_with_more(
    client: Any, service: Any, session: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(outbox_failed, "PAGE_SIZE", 2)
    failed, waiting = _batches(service, 3, waiting=1)
    first = get_page(client, FAILED, session)
    assert first.status_code == 200
    assert [batch_id for batch_id in failed if batch_id in first.text] == failed[:2]
    assert waiting[0] not in first.text
    assert f'<td data-label="Last error">HTTP 400 &lt;{failed[0]}&gt;</td>' in first.text
    assert f'href="{BASE}{FAILED}?after={failed[1]}">More</a>' in first.text
    second = get_page(client, f"{FAILED}?after={failed[1]}", session)
    assert [b for b in failed if b in second.text] == [failed[2]]
    assert ">More</a>" not in second.text and ">First page</a>" in second.text
    assert "2026-03-01 11:55 UTC" in second.text


def test_the_cli_and_the_page_read_the_same_service_method(
    service: Any, newsletter_settings: Any, monkeypatch: Any
) -> None:
    failed, _ = _batches(service, 2)
    calls: list[tuple[str | None, int]] = []
    original = type(service.admin).failed_batches

    def spy(self: Any, *, after: str | None = None, limit: int = 100) -> Any:
        calls.append((after, limit))
        return original(self, after=after, limit=limit)

    monkeypatch.setattr(type(service.admin), "failed_batches", spy)
    monkeypatch.setattr(
        "newsletter_connector.cli.context.CliState.service", lambda _state, **_options: service
    )
    result = CliRunner().invoke(cli, ["outbox", "failed", "--after", failed[0]])
    assert result.exit_code == 0, result.output
    assert calls == [(failed[0], 100)]
    assert failed[1] in result.output and failed[0] not in result.output


def test_a_bad_after_is_a_clear_400(client: Any, session: str) -> None:
    result = get_page(client, f"{FAILED}?after={'x' * 101}", session)
    assert result.status_code == 400
    assert "after must be a batch id of 1-100 characters" in result.text


def test_replay_puts_one_batch_back_and_is_audited_with_its_id(
    client: Any, service: Any, session: str
) -> None:
    failed, _ = _batches(service, 2)
    result = _act(client, FAILED, FAILED_REPLAY, session, {"batch_id": failed[0]})
    shown = followed(client, result, session)
    assert f"Batch {failed[0]} replayed with a fresh retry ladder" in shown.text
    assert _state(service, failed[0]) == "pending"
    assert _state(service, failed[1]) == "failed"
    assert shown.text.count(failed[0]) == 1  # in the flash only: no longer listed
    assert audit_acts(service)[0] == ("outbox.replay", failed[0])


@pytest.mark.parametrize("which", ["waiting", "unknown", "blank"])
def test_a_refused_replay_names_why_and_changes_nothing(
    client: Any, service: Any, session: str, which: str
) -> None:
    failed, waiting = _batches(service, 1, waiting=1)
    batch_id = {"waiting": waiting[0], "unknown": "nope", "blank": " "}[which]
    message = {
        "waiting": f"batch {waiting[0]} is pending, not failed; only failed batches replay",
        "unknown": "no batch with id &#39;nope&#39;",
        "blank": "batch_id must be a batch id of 1-100 characters",
    }[which]
    result = _act(client, FAILED, FAILED_REPLAY, session, {"batch_id": batch_id})
    assert result.status_code == 400 and message in result.text
    assert 'role="alert"' in result.text and failed[0] in result.text
    assert (_state(service, failed[0]), _state(service, waiting[0])) == ("failed", "pending")
    assert [action for action, _ in audit_acts(service)] == ["login"]


@without_token
def test_a_replay_without_its_token_changes_nothing(
    client: Any, service: Any, session: str, fields: dict[str, str], headers: dict[str, str]
) -> None:
    failed, _ = _batches(service, 1)
    token = csrf_token(get_page(client, FAILED, session))
    form = {"csrf_token": token, "batch_id": failed[0], **fields}
    result = post_form(client, FAILED_REPLAY, form, cookies={COOKIE_NAME: session}, headers=headers)
    assert result.status_code == 403 and "nothing was changed" in result.text
    assert _state(service, failed[0]) == "failed"
    assert [action for action, _ in audit_acts(service)] == ["login"]


@pytest.mark.parametrize(("method", "path"), [("GET", FAILED), ("POST", FAILED_REPLAY)])
def test_the_failed_batches_page_is_the_404_until_configured(
    client: Any, method: str, path: str
) -> None:
    unknown = client.simulate_get("/no-such-path")
    result = client.simulate_request(method, path)
    assert (result.status_code, result.text) == (404, unknown.text)


# -- admin users ----------------------------------------------------------------------------

USERS = "/admin/settings/admin-users"
DELETE = "/admin/settings/admin-users/delete"
NEW_PASSWORD = "another fine passphrase"


def _usernames(service: Any) -> list[str]:
    return [user.username for user in service.admin_access.list_users()]


def test_the_users_are_listed_with_a_delete_link_for_others_only(
    client: Any, service: Any, session: str
) -> None:
    service.admin_access.create_user("grace", NEW_PASSWORD)
    page = get_page(client, USERS, session)
    assert page.status_code == 200
    assert ">ada (you)</td>" in page.text and ">grace</td>" in page.text
    assert "2026-03-01 12:00 UTC" in page.text
    assert f'href="{BASE}{DELETE}?username=grace"' in page.text
    assert "username=ada" not in page.text
    assert "argon2" not in page.text.replace("argon2id hashes", "")
    assert f'href="{BASE}{USERS}" aria-current="page">Admin users</a>' in page.text


def test_a_new_user_is_created_audited_without_the_password_and_can_sign_in(
    client: Any, service: Any, session: str, caplog: Any
) -> None:
    caplog.set_level("DEBUG")
    fields = {"username": "grace", "password": NEW_PASSWORD, "password_again": NEW_PASSWORD}
    result = _act(client, USERS, USERS, session, fields)
    shown = followed(client, result, session)
    assert "Admin user &#39;grace&#39; created; they can sign in now." in shown.text
    assert _usernames(service) == ["ada", "grace"]
    assert audit_acts(service)[0] == ("admin_user.create", "grace")
    for text in (result.text, shown.text, caplog.text, repr(service.admin_audit.latest(20))):
        assert NEW_PASSWORD not in text
    assert service.admin_access.login("grace", NEW_PASSWORD, client_hash="c").username == "grace"


@pytest.mark.parametrize(
    ("fields", "message", "field"),
    [
        (
            {"username": "grace", "password": "short", "password_again": "short"},
            "password must be at least 12 characters",
            "password",
        ),
        (
            {"username": "grace", "password": NEW_PASSWORD, "password_again": NEW_PASSWORD + "x"},
            "the two passwords differ; type the same password twice",
            "password",
        ),
        (
            {"username": "ada", "password": NEW_PASSWORD, "password_again": NEW_PASSWORD},
            "an admin user &#39;ada&#39; already exists",
            "username",
        ),
        (
            {"username": "two words", "password": NEW_PASSWORD, "password_again": NEW_PASSWORD},
            "username must be 1-100 characters without spaces",
            "username",
        ),
    ],
    ids=["short", "differ", "taken", "spaces"],
)
def test_a_refused_user_is_shown_again_without_the_password(
    client: Any,
    service: Any,
    session: str,
    fields: dict[str, str],
    message: str,
    field: str,
) -> None:
    result = _act(client, USERS, USERS, session, fields)
    assert result.status_code == 400
    assert f'role="alert" id="user-error">{message}</p>' in result.text
    assert f'aria-describedby="{field}-hint user-error"' in result.text
    assert f'value="{fields["username"]}"' in result.text
    assert fields["password"] not in result.text and fields["password_again"] not in result.text
    assert _usernames(service) == ["ada"]
    assert [action for action, _ in audit_acts(service)] == ["login"]


def test_deleting_asks_first_then_deletes_and_ends_the_users_sessions(
    client: Any, service: Any, session: str
) -> None:
    service.admin_access.create_user("grace", PASSWORD)
    grace = sign_in(client, "grace")
    confirm = get_page(client, f"{DELETE}?username=grace", session)
    assert confirm.status_code == 200
    assert "Delete the admin user “grace”?" in confirm.text
    assert _usernames(service) == ["ada", "grace"]
    result = _act(client, USERS, DELETE, session, {"username": "grace"})
    shown = followed(client, result, session)
    assert "Admin user &#39;grace&#39; deleted; their sessions are ended." in shown.text
    assert _usernames(service) == ["ada"]
    assert audit_acts(service)[0] == ("admin_user.delete", "grace")
    with service.storage.transaction(write=False) as uow:
        assert uow.admin_sessions.get(sha256_hex(grace)) is None
    assert get_page(client, USERS, grace).status_code == 303  # signed out


def test_an_admin_cannot_delete_themselves(client: Any, service: Any, session: str) -> None:
    confirm = get_page(client, f"{DELETE}?username=ada", session)
    assert "This is your own user" in confirm.text and "Delete admin user</button>" not in (
        confirm.text
    )
    result = _act(client, USERS, DELETE, session, {"username": "ada"})
    assert result.status_code == 400
    assert "you cannot delete your own admin user" in result.text
    assert _usernames(service) == ["ada"]
    assert get_page(client, USERS, session).status_code == 200
    assert [action for action, _ in audit_acts(service)] == ["login"]


def test_deleting_an_unknown_user_is_a_404_changing_nothing(
    client: Any, service: Any, session: str
) -> None:
    assert get_page(client, f"{DELETE}?username=nobody", session).status_code == 404
    assert get_page(client, DELETE, session).status_code == 404
    result = _act(client, USERS, DELETE, session, {"username": "nobody"})
    assert result.status_code == 404
    assert _usernames(service) == ["ada"]
    assert [action for action, _ in audit_acts(service)] == ["login"]


@pytest.mark.parametrize("path", [USERS, DELETE])
@without_token
def test_user_forms_without_their_token_change_nothing(
    client: Any,
    service: Any,
    session: str,
    path: str,
    fields: dict[str, str],
    headers: dict[str, str],
) -> None:
    service.admin_access.create_user("grace", NEW_PASSWORD)
    token = csrf_token(get_page(client, USERS, session))
    form = {"csrf_token": token, "username": "grace", **fields}
    form.update(password=NEW_PASSWORD, password_again=NEW_PASSWORD)
    if path == USERS:
        form["username"] = "hopper"
    result = post_form(client, path, form, cookies={COOKIE_NAME: session}, headers=headers)
    assert result.status_code == 403 and "nothing was changed" in result.text
    assert _usernames(service) == ["ada", "grace"]
    assert [action for action, _ in audit_acts(service)] == ["login"]


def test_the_cli_deletes_through_the_same_service_method(service: Any, monkeypatch: Any) -> None:
    service.admin_access.create_user("grace", NEW_PASSWORD)
    calls: list[tuple[str, str | None]] = []
    original = type(service.admin_access).delete_user

    def spy(self: Any, username: str, *, acting_user: str | None = None) -> None:
        calls.append((username, acting_user))
        original(self, username, acting_user=acting_user)

    monkeypatch.setattr(type(service.admin_access), "delete_user", spy)
    monkeypatch.setattr(
        "newsletter_connector.cli.context.CliState.service", lambda _state, **_options: service
    )
    result = CliRunner().invoke(cli, ["admin", "delete-user", "grace"])
    assert result.exit_code == 0, result.output
    assert calls == [("grace", None)] and _usernames(service) == []


class HostAdmins:
    @hookimpl
    def newsletter_admin_user(self, environ: dict[str, Any]) -> AdminUser | None:
        return AdminUser(name="host-admin")


@pytest.mark.parametrize(
    ("method", "path"), [("POST", USERS), ("GET", f"{DELETE}?username=ada"), ("POST", DELETE)]
)
def test_with_the_host_hook_the_page_says_the_host_manages_admins(
    newsletter_settings: Any, newsletter_storage: Any, method: str, path: str
) -> None:
    service = NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, plugins=[HostAdmins()], clock=lambda: T0
    )
    service.admin_access.create_user("ada", PASSWORD)
    client = falcon.testing.TestClient(create_app(service=service))
    page = client.simulate_get(USERS)
    assert page.status_code == 200 and 'id="host-managed"' in page.text
    assert '<form method="post" action="' + BASE + USERS not in page.text
    fields = {"username": "ada", "password": NEW_PASSWORD, "password_again": NEW_PASSWORD}
    path, _, query = path.partition("?")
    result = client.simulate_request(
        method, path, query_string=query, body=urlencode(fields), headers={**FORM, "Origin": ORIGIN}
    )
    assert result.status_code == 409 and "managed there; nothing was changed" in result.text
    assert _usernames(service) == ["ada"]
    assert service.admin_audit.latest(5) == []
