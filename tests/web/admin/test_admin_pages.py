"""The admin area over HTTP with the built-in login: off (404) until configured, login, the
session cookie, expiry, logout, CSRF, and Settings → API keys (a key shown exactly once)."""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta
from typing import Any

import falcon.testing
import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.app import create_app
from tests.support.admin import (
    PASSWORD,
    T0,
    csrf_token,
    get_page,
    login_attempt,
    post_form,
    sign_in,
    submit,
)
from tests.support.pages_helpers import FORM, ORIGIN, text_of

UNKNOWN_PATHS = ("/no-such-path", "/adminx")
ADMIN_PATHS = (
    ("GET", "/admin"),
    ("GET", "/admin/"),
    ("GET", "/admin/login"),
    ("POST", "/admin/login"),
    ("POST", "/admin/logout"),
    ("GET", "/admin/settings/api-keys"),
    ("POST", "/admin/settings/api-keys"),
    ("GET", "/admin/settings/api-keys/1/revoke"),
    ("POST", "/admin/settings/api-keys/1/revoke"),
    ("GET", "/admin/assets/admin.css"),
    ("HEAD", "/admin"),
    ("POST", "/admin"),
    ("PUT", "/admin/login"),
    ("DELETE", "/admin/settings/api-keys"),
    ("GET", "/admin/logout"),
    ("GET", "/admin/no-such-page"),
)
#: What a signed-out GET of an admin page gets: a redirect to the login page.
GET_REDIRECT = 303


# -- off until configured ---------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), ADMIN_PATHS)
def test_every_admin_address_is_the_unknown_path_404_until_configured(
    client: Any, method: str, path: str
) -> None:
    result = client.simulate_request(method, path, headers={**FORM, "Origin": ORIGIN})
    for unknown in UNKNOWN_PATHS:
        reference = client.simulate_request(method, unknown)
        assert result.status_code == reference.status_code == 404
        assert result.content == reference.content
        assert sorted(result.headers.items()) == sorted(reference.headers.items())


def test_signed_out_admin_pages_send_to_the_login(client: Any, admin_user: str) -> None:
    for path in ("/admin", "/admin/", "/admin/settings/api-keys"):
        result = client.simulate_get(path)
        assert result.status_code == 303
        assert result.headers["location"] == BASE + "/admin/login"
    forged = client.simulate_get("/admin", cookies={COOKIE_NAME: "x" * 43})
    assert forged.status_code == 303


def test_a_request_asks_the_store_whether_admin_users_exist_once(
    client: Any, service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The middleware's answer serves the gate and the login page of the same request."""
    asked: list[str] = []
    has_users = service.admin_access.has_users

    def counted() -> bool:
        asked.append("has_users")
        return has_users()

    monkeypatch.setattr(service.admin_access, "has_users", counted)
    assert client.simulate_get("/admin").status_code == 404
    assert asked == ["has_users"]
    service.admin_access.create_user("ada", PASSWORD)
    session = sign_in(client)
    for path, status in (("/admin", 200), ("/admin/login", 303), ("/admin/settings/api-keys", 200)):
        asked.clear()
        assert get_page(client, path, session).status_code == status
        assert asked == ["has_users"], path
    asked.clear()
    assert client.simulate_get("/admin/settings/api-keys").status_code == 303
    assert asked == ["has_users"]


# -- login ------------------------------------------------------------------------------------


def test_login_sets_a_strict_http_only_secure_cookie_on_the_admin_path(
    client: Any, service: Any, admin_user: str
) -> None:
    result = login_attempt(client, "ada", PASSWORD)
    assert result.status_code == 303
    assert result.headers["location"] == BASE + "/admin/"
    cookie = result.cookies[COOKIE_NAME]
    assert cookie.http_only and cookie.secure and cookie.path == "/newsletter/admin"
    assert cookie.same_site == "Strict" and len(cookie.value) == 43
    home = get_page(client, "/admin", cookie.value)
    assert home.status_code == 200
    assert "<h1>Dashboard</h1>" in home.text and "Signed in as ada" in text_of(home.text)
    assert "<h2>Settings</h2>" in home.text
    assert f'<li><a href="{BASE}/admin/settings/api-keys">API keys</a></li>' in home.text
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


def test_wrong_username_or_password_says_only_that(
    client: Any, service: Any, admin_user: str
) -> None:
    for username, password in (("ada", "wrong password!"), ("bob", PASSWORD)):
        result = login_attempt(client, username, password)
        assert result.status_code == 401
        assert "wrong username or password" in result.text
        assert COOKIE_NAME not in result.cookies
    assert [act.action for act in service.admin_audit.latest(5)] == ["login.failed"] * 2


def test_failed_logins_are_throttled_with_a_429_saying_when(
    client: Any, now: list[datetime], admin_user: str
) -> None:
    for _ in range(5):
        assert login_attempt(client, "ada", "wrong password!").status_code == 401
    now[0] = T0 + timedelta(minutes=5)
    result = login_attempt(client, "ada", PASSWORD)
    assert result.status_code == 429
    assert result.headers["retry-after"] == "600"
    assert "Try again in 10 minutes" in text_of(result.text)
    assert COOKIE_NAME not in result.cookies


def test_failed_logins_from_other_clients_leave_the_admin_signing_in(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"trusted_proxies": 1})
    service = NewsletterService.build(settings, storage=newsletter_storage)
    service.admin_access.create_user("ada", PASSWORD)
    client = falcon.testing.TestClient(create_app(service=service))
    attacker = {"X-Forwarded-For": "192.0.2.1"}
    for n in range(5):
        forwarded = {"X-Forwarded-For": f"192.0.2.{n}"}
        assert login_attempt(client, "ada", "wrong password!", **forwarded).status_code == 401
    admin = login_attempt(client, "ada", PASSWORD, **{"X-Forwarded-For": "198.51.100.7"})
    assert admin.status_code == 303 and COOKIE_NAME in admin.cookies
    for _ in range(4):
        assert login_attempt(client, "ada", "wrong password!", **attacker).status_code == 401
    result = login_attempt(client, "ada", PASSWORD, **attacker)
    assert result.status_code == 429
    assert 0 < int(result.headers["retry-after"]) <= 900
    assert "Too many failed sign-ins" in text_of(result.text)


def test_a_password_typed_as_the_username_is_not_on_the_audit_page(
    client: Any, service: Any, admin_user: str
) -> None:
    assert login_attempt(client, PASSWORD, "").status_code == 401
    page = get_page(client, "/admin/audit", sign_in(client))
    assert "(unknown user)" in page.text and PASSWORD not in page.text


def test_login_form_from_another_site_is_refused(client: Any, admin_user: str) -> None:
    result = login_attempt(client, "ada", PASSWORD, **{"Sec-Fetch-Site": "cross-site"})
    assert result.status_code == 403 and COOKIE_NAME not in result.cookies
    no_token = post_form(client, "/admin/login", {"username": "ada", "password": PASSWORD})
    assert no_token.status_code == 403 and COOKIE_NAME not in no_token.cookies


# -- sessions ---------------------------------------------------------------------------------


def test_session_ends_after_two_idle_hours(
    client: Any, now: list[datetime], admin_user: str
) -> None:
    session = sign_in(client)
    now[0] = T0 + timedelta(hours=1, minutes=50)
    assert get_page(client, "/admin", session).status_code == 200
    now[0] = T0 + timedelta(hours=3, minutes=50)
    assert get_page(client, "/admin", session).status_code == GET_REDIRECT


def test_session_ends_twelve_hours_after_sign_in(
    client: Any, now: list[datetime], admin_user: str
) -> None:
    session = sign_in(client)
    for hour in range(1, 12):
        now[0] = T0 + timedelta(hours=hour)
        assert get_page(client, "/admin", session).status_code == 200
    now[0] = T0 + timedelta(hours=12)
    assert get_page(client, "/admin", session).status_code == GET_REDIRECT


def test_logout_deletes_the_session(client: Any, service: Any, admin_user: str) -> None:
    session = sign_in(client)
    token = csrf_token(get_page(client, "/admin", session))
    result = post_form(
        client, "/admin/logout", {"csrf_token": token}, cookies={COOKIE_NAME: session}
    )
    assert result.status_code == 303
    assert result.headers["location"] == BASE + "/admin/login"
    assert result.cookies[COOKIE_NAME].value == ""
    assert get_page(client, "/admin", session).status_code == GET_REDIRECT
    assert service.admin_audit.latest(1)[0].action == "logout"


def test_logout_without_its_token_keeps_the_session(client: Any, admin_user: str) -> None:
    session = sign_in(client)
    result = post_form(
        client, "/admin/logout", {"csrf_token": "forged"}, cookies={COOKIE_NAME: session}
    )
    assert result.status_code == 403
    assert get_page(client, "/admin", session).status_code == 200


# -- API keys ---------------------------------------------------------------------------------


def test_a_new_key_is_shown_exactly_once(
    client: Any, service: Any, admin_user: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session = sign_in(client)
    created = submit(client, "/admin/settings/api-keys", session, {"label": "site backend"})
    assert created.status_code == 200
    assert created.headers["cache-control"] == "no-store"
    key = re.search(r'value="(nlk_[^"]+)"', created.text).group(1)
    assert "Copy it now; it will not be shown again" in created.text
    assert service.admin.authenticate_api_key(key).label == "site backend"
    listed = get_page(client, "/admin/settings/api-keys", session)
    assert "site backend" in listed.text and key[:8] in listed.text
    assert key not in listed.text and key not in get_page(client, "/admin", session).text
    assert key not in caplog.text
    [act, _login] = service.admin_audit.latest(5)
    assert (act.actor, act.action, act.target) == ("ada", "api_key.create", "site backend")
    assert all(key not in repr(a) for a in service.admin_audit.latest(5))


def test_an_invalid_label_is_shown_with_the_form(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    submit(client, "/admin/settings/api-keys", session, {"label": "taken"})
    again = submit(client, "/admin/settings/api-keys", session, {"label": "taken"})
    assert again.status_code == 400 and "already exists" in again.text
    assert 'value="nlk_' not in again.text
    assert len(service.admin.list_api_keys()) == 1


@pytest.mark.parametrize(
    ("fields", "headers"),
    [
        ({"csrf_token": ""}, {}),
        ({"csrf_token": "forged-token"}, {}),
        ({}, {"Sec-Fetch-Site": "cross-site"}),
        ({}, {"Origin": "https://evil.example"}),
    ],
    ids=["missing", "forged", "cross-site", "foreign-origin"],
)
def test_forms_without_their_token_or_from_elsewhere_change_nothing(
    client: Any, service: Any, admin_user: str, fields: dict[str, str], headers: dict[str, str]
) -> None:
    session = sign_in(client)
    token = csrf_token(get_page(client, "/admin/settings/api-keys", session))
    service.admin.create_api_key("kept")
    for path, extra in (
        ("/admin/settings/api-keys", {"label": "new"}),
        ("/admin/settings/api-keys/1/revoke", {}),
    ):
        result = post_form(
            client,
            path,
            {"csrf_token": token, **extra, **fields},
            cookies={COOKIE_NAME: session},
            headers=headers,
        )
        assert result.status_code == 403, path
        assert "nothing was changed" in result.text
    [key] = service.admin.list_api_keys()
    assert key.label == "kept" and key.active
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


def test_revoke_asks_first_then_revokes_and_audits(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    issued = service.admin.create_api_key("old client")
    path = f"/admin/settings/api-keys/{issued.record.id}/revoke"
    confirm = get_page(client, path, session)
    assert confirm.status_code == 200 and "Revoke the key “old client”?" in confirm.text
    assert service.admin.list_api_keys()[0].active
    result = submit(client, path, session, {})
    assert result.status_code == 303
    assert result.headers["location"] == BASE + "/admin/settings/api-keys"
    assert not service.admin.list_api_keys()[0].active
    with pytest.raises(Exception, match="unknown or revoked"):
        service.admin.authenticate_api_key(issued.key)
    flash = result.cookies["newsletter_admin_flash"].value
    listed = client.simulate_get(
        "/admin/settings/api-keys",
        cookies={COOKIE_NAME: session, "newsletter_admin_flash": flash},
    )
    assert "Key &#39;old client&#39; revoked" in listed.text and "Revoked 2026-03-01" in listed.text
    act = service.admin_audit.latest(1)[0]
    assert (act.actor, act.action, act.target) == ("ada", "api_key.revoke", "old client")
    assert get_page(client, "/admin/settings/api-keys/999/revoke", session).status_code == 404


def test_a_forged_flash_message_is_not_shown(client: Any, admin_user: str) -> None:
    session = sign_in(client)
    page = client.simulate_get(
        "/admin", cookies={COOKIE_NAME: session, "newsletter_admin_flash": "SGVsbG8.abc"}
    )
    assert page.status_code == 200 and 'class="flash"' not in page.text


# -- beneath a mount prefix -------------------------------------------------------------------


def test_links_and_cookie_path_follow_the_mount_prefix(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"base_url": "https://example.org/news"})
    service = NewsletterService.build(settings, storage=newsletter_storage)
    service.admin_access.create_user("ada", PASSWORD)
    client = falcon.testing.TestClient(create_app(service=service))
    assert (
        client.simulate_get("/admin").headers["location"] == "https://example.org/news/admin/login"
    )
    login = client.simulate_get("/admin/login")
    assert 'action="https://example.org/news/admin/login"' in login.text
    assert 'href="https://example.org/news/admin/assets/admin.css"' in login.text
    result = login_attempt(client, "ada", PASSWORD, Origin="https://example.org")
    assert result.cookies[COOKIE_NAME].path == "/news/admin"


@pytest.mark.parametrize(
    ("address", "status", "title"),
    [
        ("/admin/no-such-page", 404, "Nothing here"),
        ("/admin/subscribers/unsubscribe", 405, "Not a page"),
        ("/admin/settings/api-keys/99/revoke", 404, "Nothing here"),
    ],
)
def test_a_signed_in_admins_error_pages_are_in_the_admin_layout(
    client: Any, session: str, address: str, status: int, title: str
) -> None:
    page = get_page(client, address, session)
    assert page.status_code == status
    assert f"<h1>{title}</h1>" in page.text
    assert 'class="admin-header"' in page.text and "Back to the dashboard" in page.text
    visitor = client.simulate_get("/no-such-page")
    assert visitor.status_code == 404 and 'class="admin-header"' not in visitor.text
