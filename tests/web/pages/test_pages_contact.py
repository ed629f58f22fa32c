"""The contact page: a row in the lossless log and ``contact.message``; never a subscriber."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL
from tests.support.pages_helpers import field_error, input_value, open_form, text_of
from tests.support.subscriber_helpers import events_of, outbox

GOOD = {"email": "Visitor@Example.org", "name": "Ada Lovelace", "message": "Hello!\nA question."}


def _messages(service: Any) -> list[Any]:
    return list(service.messages.list_page().items)


def test_form_has_labelled_fields(newsletter_client: Any) -> None:
    page = newsletter_client.simulate_get("/contact")
    assert page.status_code == 200
    for name in ("email", "name", "message"):
        assert f'<label for="{name}">' in page.text
    assert 'name="csrf_token"' in page.text and 'name="website"' in page.text


def test_message_is_logged_and_queued_and_no_subscriber_is_made(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    form = open_form(newsletter_client, "/contact")
    result = form.post(newsletter_client, "/contact", GOOD)
    assert result.status_code == 303
    assert result.headers["location"] == TEST_BASE_URL + "/contact/thanks"
    [message] = _messages(newsletter_service)
    assert (message.email, message.name) == ("visitor@example.org", "Ada Lovelace")
    assert message.message == "Hello!\nA question."
    [event] = outbox(newsletter_service)
    assert event["type"] == "contact.message"
    assert newsletter_service.subscribers.list_page().items == []
    thanks = newsletter_client.simulate_get("/contact/thanks")
    assert thanks.status_code == 200 and "message has been sent" in text_of(thanks.text)


def test_every_message_is_kept(newsletter_client: Any, newsletter_service: Any) -> None:
    form = open_form(newsletter_client, "/contact")
    form.post(newsletter_client, "/contact", GOOD)
    form.post(newsletter_client, "/contact", {**GOOD, "message": "Again", "name": "  "})
    messages = _messages(newsletter_service)
    assert [m.message for m in messages] == ["Hello!\nA question.", "Again"]
    assert messages[1].name is None  # blank name is stored as null
    assert len(events_of(newsletter_service, "contact.message")) == 2


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"email": "nope"}, "email", "Enter your email address"),
        ({"message": "   "}, "message", "Enter your message"),
        ({"message": "x" * 10_001}, "message", "10,000 characters or fewer"),
        ({"name": "n" * 201}, "name", "200 characters or fewer"),
    ],
)
def test_bad_input_is_shown_beside_the_field_with_values_kept(
    newsletter_client: Any,
    newsletter_service: Any,
    fields: dict[str, str],
    field: str,
    message: str,
) -> None:
    form = open_form(newsletter_client, "/contact")
    result = form.post(newsletter_client, "/contact", {**GOOD, **fields})
    assert result.status_code == 400
    assert message in (field_error(result.text, field) or "")
    typed = {**GOOD, **fields}
    assert input_value(result.text, "email") == typed["email"]
    assert input_value(result.text, "name") == typed["name"].strip()
    assert input_value(result.text, "message") == typed["message"]
    assert _messages(newsletter_service) == [] and outbox(newsletter_service) == []


def test_honeypot_and_missing_token_store_nothing(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    form = open_form(newsletter_client, "/contact")
    trap = form.post(newsletter_client, "/contact", {**GOOD, "website": "x"})
    assert trap.status_code == 303
    assert trap.headers["location"] == TEST_BASE_URL + "/contact/thanks"
    stale = form.post(newsletter_client, "/contact", GOOD, with_token=False)
    assert stale.status_code == 400
    assert input_value(stale.text, "message") == GOOD["message"]
    cross = form.post(newsletter_client, "/contact", GOOD, headers={"Origin": "https://x.example"})
    assert cross.status_code == 403
    assert _messages(newsletter_service) == [] and outbox(newsletter_service) == []


@pytest.mark.parametrize("field", ["email", "name", "message"])
def test_a_nul_character_is_refused_beside_its_field(
    newsletter_client: Any, newsletter_service: Any, field: str
) -> None:
    form = open_form(newsletter_client, "/contact")
    result = form.post(newsletter_client, "/contact", {**GOOD, field: "a\x00b@example.org"})
    assert result.status_code == 400
    assert field_error(result.text, field)
    assert _messages(newsletter_service) == []
