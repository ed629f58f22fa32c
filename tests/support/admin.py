"""Helpers for the admin-area tests over HTTP: an admin user, signing in through the built-in
login, reading a page with the session cookie and posting its forms with their CSRF token, and
following a post/redirect/get to its flash message.

The fixtures (``now``, ``service``, ``client``, ``admin_user``, ``session``) are registered for
every test module by ``tests/conftest.py``; a module defining one of its own uses that instead.
"""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape
from typing import Any
from urllib.parse import urlencode

import falcon.testing
import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.app import create_app
from tests.support.pages_helpers import FORM, ORIGIN, open_form

PASSWORD = "correct horse battery"
T0 = datetime(2026, 3, 1, 12, 0, 0)
FLASH = "newsletter_admin_flash"
_TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]*)"')
_FLASH_RE = re.compile(r'<p class="flash" role="status">([^<]*)</p>')

#: Parametrizes a test's ``fields`` and ``headers`` as the two posts that lack their form's
#: token: a forged token, and a post from another site.
without_token = pytest.mark.parametrize(
    ("fields", "headers"),
    [({"csrf_token": "forged"}, {}), ({}, {"Origin": "https://evil.example"})],
    ids=["forged", "foreign-origin"],
)


@pytest.fixture
def now() -> list[datetime]:
    """The service's clock: set ``now[0]`` to move it."""
    return [T0]


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, now: list[datetime]) -> Any:
    return NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, clock=lambda: now[0]
    )


@pytest.fixture
def client(service: Any) -> Any:
    return falcon.testing.TestClient(create_app(service=service))


@pytest.fixture
def admin_user(service: Any) -> str:
    service.admin_access.create_user("ada", PASSWORD)
    return "ada"


@pytest.fixture
def session(client: Any, admin_user: str) -> str:
    """The session cookie of ``admin_user``, signed in."""
    return sign_in(client, admin_user)


def post_form(client: Any, path: str, fields: dict[str, str], **options: Any) -> Any:
    """POST ``fields`` form-encoded from the site's own origin (``options`` go to falcon)."""
    headers = {**FORM, "Origin": ORIGIN, **options.pop("headers", {})}
    return client.simulate_post(
        path, body=urlencode(fields, doseq=True), headers=headers, **options
    )


def post_upload(
    client: Any,
    path: str,
    fields: dict[str, str],
    file: tuple[str, bytes] | None,
    **options: Any,
) -> Any:
    """POST ``fields`` then ``file`` (name, content) as the ``file`` field of a multipart
    form, from the site's own origin (``options`` go to falcon)."""
    boundary = "test-boundary-7f3a9c"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    if file is not None:
        name, data = file
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/csv\r\n\r\n"
        )
        parts.append(head.encode() + data + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    headers = {
        "Content-Type": f"multipart/form-data; boundary={boundary}",
        "Origin": ORIGIN,
        **options.pop("headers", {}),
    }
    return client.simulate_post(path, body=body, headers=headers, **options)


def login_attempt(client: Any, username: str, password: str, **headers: str) -> Any:
    """The login form, fetched and posted back with its CSRF token and cookie."""
    form = open_form(client, "/admin/login")
    fields = {"username": username, "password": password}
    return form.post(client, "/admin/login", fields, headers=headers)


def sign_in(client: Any, username: str = "ada") -> str:
    """Sign ``username`` in with :data:`PASSWORD`; the session cookie's value."""
    result = login_attempt(client, username, PASSWORD)
    assert result.status_code == 303, result.text
    return result.cookies[COOKIE_NAME].value


def get_page(client: Any, path: str, session: str) -> Any:
    """GET an admin page signed in as ``session``."""
    return client.simulate_get(path, cookies={COOKIE_NAME: session})


def csrf_token(page: Any) -> str:
    """The CSRF token of the forms on ``page`` (anything with the page's ``text``)."""
    match = _TOKEN_RE.search(page.text)
    assert match, "page has no csrf_token field"
    return match.group(1)


def submit(
    client: Any,
    path: str,
    session: str,
    fields: dict[str, str],
    *,
    form: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """POST ``fields`` to ``path`` signed in as ``session``, with the CSRF token of the page
    ``form`` (``path`` itself unless named)."""
    token = csrf_token(get_page(client, form or path, session))
    return post_form(
        client,
        path,
        {**fields, "csrf_token": token},
        cookies={COOKIE_NAME: session},
        headers=headers or {},
    )


def followed(client: Any, result: Any, session: str) -> Any:
    """The page a 303 leads to, with the flash cookie it set."""
    assert result.status_code == 303, result.text
    path = result.headers["location"].removeprefix(TEST_BASE_URL)
    return client.simulate_get(
        path, cookies={COOKIE_NAME: session, FLASH: result.cookies[FLASH].value}
    )


def flash_of(page: Any) -> str:
    """The flash message ``page`` shows."""
    match = _FLASH_RE.search(page.text)
    assert match, "page shows no flash message"
    return unescape(match.group(1))


def queued_events(service: Any, email: str) -> list[str]:
    """The types of the events queued about ``email``, newest first."""
    key = subscriber_key(service.context, email)
    with service.storage.transaction(write=False) as uow:
        return [event.event_type for event in uow.outbox.events_about(key, limit=20)]


def audit_acts(service: Any) -> list[tuple[str, str | None]]:
    """The latest audited acts, newest first: ``(action, target)``."""
    return [(entry.action, entry.target) for entry in service.admin_audit.latest(20)]
