"""Admin → Contact messages over HTTP: the log newest first, keyset-paged, the text escaped with
its line breaks kept, and a reply link whose address and subject are percent-encoded."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any

import falcon.testing
import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin import messages as messages_page
from newsletter_connector.web.admin.messages import reply_link
from newsletter_connector.web.app import create_app

from .test_admin_pages import PASSWORD, _page, _sign_in

T0 = datetime(2026, 3, 1, 12, 0, 0)
_SENDERS = re.compile(r'<h2 id="message-\d+">([^<]*(?:&lt;[^<]*&gt;)?)</h2>')
_NEXT = re.compile(r'<a href="([^"]*)" rel="next">')


@pytest.fixture
def clock() -> list[datetime]:
    return [T0]


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, clock: list[datetime]) -> Any:
    return NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, clock=lambda: clock[0]
    )


@pytest.fixture
def client(service: Any) -> Any:
    return falcon.testing.TestClient(create_app(service=service))


@pytest.fixture
def admin_user(service: Any) -> str:
    service.admin_access.create_user("ada", PASSWORD)
    return "ada"


def test_signed_out_visitors_are_sent_to_the_login(client: Any, admin_user: str) -> None:
    result = client.simulate_get("/admin/messages")
    assert result.status_code == 303 and result.headers["location"] == BASE + "/admin/login"


def test_messages_are_listed_newest_first_in_keyset_pages(
    client: Any, service: Any, admin_user: str, clock: list[datetime], monkeypatch: Any
) -> None:
    monkeypatch.setattr(messages_page, "PAGE_SIZE", 2)
    session = _sign_in(client)
    assert "No messages yet." in _page(client, "/admin/messages", session).text
    for n in range(5):
        clock[0] = T0 + timedelta(minutes=n)
        service.messages.record(f"m{n}@example.org", f"Name {n}" if n % 2 else None, f"text {n}")
    first = _page(client, "/admin/messages", session)
    assert [unescape(s) for s in _SENDERS.findall(first.text)] == [
        "m4@example.org",
        "Name 3 <m3@example.org>",
    ]
    assert '<time datetime="2026-03-01T12:04:00Z">2026-03-01 12:04 UTC</time>' in first.text
    second = _page(client, unescape(_NEXT.search(first.text)[1]).removeprefix(BASE), session)
    assert [unescape(s) for s in _SENDERS.findall(second.text)] == [
        "m2@example.org",
        "Name 1 <m1@example.org>",
    ]
    third = _page(client, unescape(_NEXT.search(second.text)[1]).removeprefix(BASE), session)
    assert [unescape(s) for s in _SENDERS.findall(third.text)] == ["m0@example.org"]
    assert _NEXT.search(third.text) is None and "Back to the newest messages" in third.text


def test_the_text_is_escaped_with_its_whitespace_kept(
    client: Any, service: Any, admin_user: str
) -> None:
    service.messages.record("x@example.org", "<b>X</b>", "Hello <script>alert(1)</script>\n\n  two")
    page = _page(client, "/admin/messages", _sign_in(client))
    assert "<script>" not in page.text and "<b>X</b>" not in page.text
    assert (
        '<div class="message-text">Hello &lt;script&gt;alert(1)&lt;/script&gt;\n\n  two</div>'
        in page.text
    )
    assert "&lt;b&gt;X&lt;/b&gt; &lt;x@example.org&gt;" in page.text


def test_the_reply_link_is_mailto_the_sender_with_an_encoded_subject(
    client: Any, service: Any, admin_user: str
) -> None:
    service.messages.record("a+b@example.org", None, "hi")
    page = _page(client, "/admin/messages", _sign_in(client))
    assert 'href="mailto:a%2Bb@example.org?subject=Re%3A%20your%20message"' in page.text
    assert reply_link("x&cc=evil@example.org") == (
        "mailto:x%26cc%3Devil@example.org?subject=Re%3A%20your%20message"
    )


def test_a_cursor_that_is_not_one_is_a_400(client: Any, admin_user: str) -> None:
    result = _page(client, "/admin/messages?cursor=nope", _sign_in(client))
    assert result.status_code == 400 and "cursor is not a cursor" in result.text
