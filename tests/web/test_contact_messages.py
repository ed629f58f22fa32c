"""GET /contact-messages (docs/newsletter-api.md, "Contact messages"): a lossless log in arrival
order."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.errors import InvalidRequest
from tests.support.subscriber_helpers import MESSAGES, events_of, outbox, post, wire


def test_every_message_is_its_own_row_in_arrival_order(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    messages = newsletter_service.messages
    first = messages.record("Visitor@Example.org", "  Vi  ", "Hello there")
    messages.record("visitor@example.org", "", "Hello again")  # same sender: not merged
    messages.record("other@example.org", None, "Büro: ünïcode ✓")
    result = newsletter_client.simulate_get(MESSAGES, headers=auth)
    assert result.status_code == 200
    data = result.json["data"]
    assert result.json["next_cursor"] is None
    assert [m["message"] for m in data] == ["Hello there", "Hello again", "Büro: ünïcode ✓"]
    assert data[0] == {
        "id": str(first.id),
        "email": "visitor@example.org",
        "name": "Vi",
        "message": "Hello there",
        "submitted_at": data[0]["submitted_at"],
    }
    assert list(data[0]) == ["id", "email", "name", "message", "submitted_at"]
    assert data[1]["name"] is None and data[2]["name"] is None
    assert data[0]["submitted_at"].endswith("Z")


def test_message_queues_contact_message_event_and_no_subscriber(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    record = newsletter_service.messages.record("m@example.org", "M", "Question")
    [event] = outbox(newsletter_service)
    assert event["type"] == "contact.message"
    assert wire(event["payload"]) == wire(newsletter_service.messages.payload(record))
    assert event["subscriber_key"]  # keyed to the address, so erasure discards it
    listed = newsletter_client.simulate_get(MESSAGES, headers=auth).json["data"][0]
    assert wire(listed) == wire(event["payload"])
    # Not an opt-in: no subscriber exists for the sender.
    assert (
        newsletter_client.simulate_get(
            "/api/newsletter/v1/subscribers/m%40example.org", headers=auth
        ).status_code
        == 404
    )


def test_erasure_erases_the_senders_messages_and_their_queued_events(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    post(newsletter_client, auth, {"email": "x@example.org"})
    newsletter_service.messages.record("x@example.org", None, "Remove me")
    newsletter_service.messages.record("y@example.org", None, "Keep me")
    newsletter_service.subscribers.erase("x@example.org")
    assert [e["payload"]["email"] for e in events_of(newsletter_service, "contact.message")] == [
        "y@example.org"
    ]
    listed = newsletter_client.simulate_get(MESSAGES, headers=auth).json["data"]
    assert [m["email"] for m in listed] == ["y@example.org"]


def test_cursor_walk(newsletter_client: Any, auth: dict[str, str], newsletter_service: Any) -> None:
    for i in range(5):
        newsletter_service.messages.record(f"w{i}@example.org", None, f"message {i}")
    seen: list[str] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        page = newsletter_client.simulate_get(MESSAGES, headers=auth, params=params).json
        seen += [m["message"] for m in page["data"]]
        if page["next_cursor"] is None:
            break
        params = {"limit": 2, "cursor": page["next_cursor"]}
    assert seen == [f"message {i}" for i in range(5)]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=x", "limit"),
        ("cursor=%%%", "cursor"),
        ("cursor=eyJrIjoic3Vic2NyaWJlcnMiLCJhIjoxfQ", "cursor"),  # a subscribers cursor
    ],
)
def test_bad_query_names_the_parameter(
    newsletter_client: Any, auth: dict[str, str], query: str, field: str
) -> None:
    result = newsletter_client.simulate_get(MESSAGES, headers=auth, query_string=query)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("bad", None, "hi"), "email"),
        (("a@example.org", None, "   "), "message"),
        (("a@example.org", None, "x" * 10_001), "message"),
        (("a@example.org", "n" * 201, "hi"), "name"),
        (("a@example.org", None, "nul\x00byte"), "message"),
        (("a@example.org", "nul\x00", "hi"), "name"),
        (("a@example.org", None, "lone \ud800 surrogate"), "message"),
    ],
)
def test_invalid_message_is_refused_and_nothing_stored(
    newsletter_service: Any, args: tuple[Any, ...], field: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        newsletter_service.messages.record(*args)
    assert raised.value.field == field
    assert newsletter_service.messages.list_page().items == []
    assert outbox(newsletter_service) == []
