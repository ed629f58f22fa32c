"""Admin → Contact messages over HTTP: the log newest first, keyset-paged, the text escaped with
its line breaks kept, and a reply link whose address and subject are percent-encoded."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any

from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin import messages as messages_page
from newsletter_connector.web.admin.messages import reply_link
from tests.support.admin import T0, get_page, sign_in

_SENDERS = re.compile(r'<h2 id="message-\d+">([^<]*(?:&lt;[^<]*&gt;)?)</h2>')
_NEXT = re.compile(r'<a href="([^"]*)" rel="next">')


def test_signed_out_visitors_are_sent_to_the_login(client: Any, admin_user: str) -> None:
    result = client.simulate_get("/admin/messages")
    assert result.status_code == 303 and result.headers["location"] == BASE + "/admin/login"


def test_messages_are_listed_newest_first_in_keyset_pages(
    client: Any, service: Any, admin_user: str, now: list[datetime], monkeypatch: Any
) -> None:
    monkeypatch.setattr(messages_page, "PAGE_SIZE", 2)
    session = sign_in(client)
    assert "No messages yet." in get_page(client, "/admin/messages", session).text
    for n in range(5):
        now[0] = T0 + timedelta(minutes=n)
        service.messages.record(f"m{n}@example.org", f"Name {n}" if n % 2 else None, f"text {n}")
    first = get_page(client, "/admin/messages", session)
    assert [unescape(s) for s in _SENDERS.findall(first.text)] == [
        "m4@example.org",
        "Name 3 <m3@example.org>",
    ]
    assert '<time datetime="2026-03-01T12:04:00Z">2026-03-01 12:04 UTC</time>' in first.text
    second = get_page(client, unescape(_NEXT.search(first.text)[1]).removeprefix(BASE), session)
    assert [unescape(s) for s in _SENDERS.findall(second.text)] == [
        "m2@example.org",
        "Name 1 <m1@example.org>",
    ]
    third = get_page(client, unescape(_NEXT.search(second.text)[1]).removeprefix(BASE), session)
    assert [unescape(s) for s in _SENDERS.findall(third.text)] == ["m0@example.org"]
    assert _NEXT.search(third.text) is None and "Back to the newest messages" in third.text


def test_the_text_is_escaped_with_its_whitespace_kept(
    client: Any, service: Any, admin_user: str
) -> None:
    service.messages.record("x@example.org", "<b>X</b>", "Hello <script>alert(1)</script>\n\n  two")
    page = get_page(client, "/admin/messages", sign_in(client))
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
    page = get_page(client, "/admin/messages", sign_in(client))
    assert 'href="mailto:a%2Bb@example.org?subject=Re%3A%20your%20message"' in page.text
    assert reply_link("x&cc=evil@example.org") == (
        "mailto:x%26cc%3Devil@example.org?subject=Re%3A%20your%20message"
    )


def test_a_cursor_that_is_not_one_is_a_400(client: Any, admin_user: str) -> None:
    result = get_page(client, "/admin/messages?cursor=nope", sign_in(client))
    assert result.status_code == 400 and "cursor is not a cursor" in result.text
