"""Admin → Contact messages over HTTP: the log newest first, keyset-paged, the text escaped with
its line breaks kept, a reply link whose address, subject and quoted message are
percent-encoded, and handled marks (by whom, when) that never change the message, with a view
of the messages not handled yet."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from newsletter_connector.storage.records import ContactMessageRecord
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin import messages as messages_page
from newsletter_connector.web.admin import paths
from newsletter_connector.web.admin.messages import MAX_QUOTED, reply_link
from tests.support.admin import (
    T0,
    audit_acts,
    flash_of,
    followed,
    get_page,
    sign_in,
    submit,
)

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


def _message(email: str, text: str, name: str | None = None) -> ContactMessageRecord:
    return ContactMessageRecord(id=1, email=email, name=name, message=text, submitted_at=T0)


def test_the_reply_link_is_mailto_the_sender_with_an_encoded_subject_and_the_message_quoted(
    client: Any, service: Any, admin_user: str
) -> None:
    service.messages.record("a+b@example.org", "Ann", "hi\nthere")
    page = get_page(client, "/admin/messages", sign_in(client))
    body = (
        "%0D%0A%0D%0AOn%202026-03-01%2012%3A00%20UTC%2C%20Ann%20wrote%3A"
        "%0D%0A%3E%20hi%0D%0A%3E%20there"
    )
    link = f"mailto:a%2Bb@example.org?subject=Re%3A%20your%20message&amp;body={body}"
    assert f'href="{link}"' in page.text
    forged = reply_link(_message("x&cc=evil@example.org", "a&bcc=b@example.org\r\nBcc: c"))
    parts = urlsplit(forged)
    assert parts.path == "x%26cc%3Devil@example.org"
    assert set(parse_qs(parts.query)) == {"subject", "body"}
    assert parse_qs(parts.query)["body"][0].endswith("> a&bcc=b@example.org\r\n> Bcc: c")


def test_a_long_message_is_quoted_in_part() -> None:
    quoted = parse_qs(urlsplit(reply_link(_message("a@example.org", "x" * 5000))).query)
    body = quoted["body"][0]
    assert body.endswith(f"> {'x' * MAX_QUOTED}\r\n> [...]")


def test_an_admin_marks_a_message_handled_and_the_unhandled_view_leaves_it_out(
    client: Any, service: Any, admin_user: str, now: list[datetime]
) -> None:
    first = service.messages.record("a@example.org", "Ann", "first")
    second = service.messages.record("b@example.org", None, "second")
    session = sign_in(client)
    now[0] = T0 + timedelta(minutes=90)
    done = submit(
        client,
        paths.MESSAGE_HANDLED,
        session,
        {"message_id": str(first.id), "show": "unhandled"},
        form=paths.MESSAGES,
    )
    assert done.headers["location"] == BASE + "/admin/messages?show=unhandled"
    assert flash_of(followed(client, done, session)) == f"Message {first.id} is marked handled."
    everything = get_page(client, "/admin/messages", session).text
    assert "Handled by ada on <time" in everything and "2026-03-01 13:30 UTC" in everything
    unhandled = get_page(client, "/admin/messages?show=unhandled", session).text
    assert [unescape(s) for s in _SENDERS.findall(unhandled)] == ["b@example.org"]
    assert service.messages.list_page().items == [first, second]  # the log never changes
    assert ("message.handled", f"message {first.id}") in audit_acts(service)

    again = submit(
        client, paths.MESSAGE_HANDLED, session, {"message_id": str(first.id)}, form=paths.MESSAGES
    )
    assert again.status_code == 303
    assert service.messages.handling_of([first])[first.id].handled_at == T0 + timedelta(minutes=90)

    undone = submit(
        client, paths.MESSAGE_UNHANDLED, session, {"message_id": str(first.id)}, form=paths.MESSAGES
    )
    assert undone.headers["location"] == BASE + "/admin/messages"
    assert service.messages.handling_of([first, second]) == {}
    assert (
        "Every message is handled."
        not in get_page(client, "/admin/messages?show=unhandled", session).text
    )


@pytest.mark.parametrize("message_id", ["999", "0", "-1", "1e3", "", "99999999999999999999"])
def test_marking_a_message_that_is_not_one_is_a_404(
    client: Any, service: Any, admin_user: str, message_id: str
) -> None:
    service.messages.record("a@example.org", None, "hello")
    result = submit(
        client,
        paths.MESSAGE_HANDLED,
        sign_in(client),
        {"message_id": message_id},
        form=paths.MESSAGES,
    )
    assert result.status_code == 404
    assert service.messages.handling_of(service.messages.list_page().items) == {}


def test_the_unhandled_view_pages_on_with_its_own_cursor(
    client: Any, service: Any, admin_user: str, monkeypatch: Any
) -> None:
    monkeypatch.setattr(messages_page, "PAGE_SIZE", 2)
    records = [service.messages.record(f"m{n}@example.org", None, f"t{n}") for n in range(5)]
    service.messages.mark_handled(records[3].id, by="ada")
    session = sign_in(client)
    first = get_page(client, "/admin/messages?show=unhandled", session)
    assert [unescape(s) for s in _SENDERS.findall(first.text)] == [
        "m4@example.org",
        "m2@example.org",
    ]
    next_path = unescape(_NEXT.search(first.text)[1]).removeprefix(BASE)
    assert next_path.startswith("/admin/messages?show=unhandled&cursor=")
    second = get_page(client, next_path, session)
    assert [unescape(s) for s in _SENDERS.findall(second.text)] == [
        "m1@example.org",
        "m0@example.org",
    ]
    other_view = next_path.replace("show=unhandled&", "")
    assert get_page(client, other_view, session).status_code == 400


def test_erasing_the_sender_takes_the_mark_with_the_message(
    client: Any, service: Any, admin_user: str
) -> None:
    record = service.messages.record("gone@example.org", None, "erase me")
    service.messages.mark_handled(record.id, by="ada")
    service.subscribers.erase_address("gone@example.org")
    assert service.messages.list_page().items == []
    with service.storage.transaction(write=False) as uow:
        assert uow.message_handling.of([record.id]) == {}


def test_a_cursor_that_is_not_one_is_a_400(client: Any, admin_user: str) -> None:
    result = get_page(client, "/admin/messages?cursor=nope", sign_in(client))
    assert result.status_code == 400 and "cursor is not a cursor" in result.text
