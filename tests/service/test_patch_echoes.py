"""What GET gave, PATCH takes back (docs/newsletter-api.md, "Change fields or unsubscribe").

Read-only contact fields (``email``, the timestamps, the URLs) are accepted with their current
values and change nothing; any other value is ``invalid_request`` naming the field. ``status`` keeps
its own rule whatever the subscriber's status: only ``unsubscribed`` (docs/newsletter-api.md,
"Change fields or unsubscribe").
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from newsletter_connector.service.subscribers import READ_ONLY_FIELDS
from tests.support.subscriber_helpers import one, outbox, patch, post

CONSENT = {"source": "import", "collected_at": "2026-01-02T03:04:05Z"}
PROFILE = {
    "first_name": "Ann",
    "last_name": "Echo",
    "zip": "12345",
    "phone": "+44 20 7946 0000",
    "prefs": {"email": {"puzzles": "weekly"}, "sms": {"enabled": True}},
    "categories": ["health", "money"],
}


def _get(client: Any, auth: dict[str, str], email: str) -> dict[str, Any]:
    result = client.simulate_get(one(email), headers=auth)
    assert result.status_code == 200
    return dict(result.json)


def _stored(service: Any, email: str) -> Any:
    return service.subscribers.get(email)


@pytest.fixture
def confirmed(newsletter_client: Any, auth: dict[str, str], newsletter_service: Any) -> str:
    """A confirmed subscriber with every profile field and a completed profile."""
    email = "echo@example.org"
    assert post(newsletter_client, auth, {"email": email, "consent": CONSENT}).status_code == 201
    patch(newsletter_client, auth, email, {"phone": PROFILE["phone"]})
    record = _stored(newsletter_service, email)
    newsletter_service.subscribers.update_profile_by_token(
        record.profile_token, {**PROFILE, "age_range": "65_74", "gender": "woman"}
    )
    return email


def test_a_get_body_sent_back_verbatim_changes_nothing(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, confirmed: str
) -> None:
    patch(newsletter_client, auth, confirmed, {"status": "unsubscribed"})
    before = _get(newsletter_client, auth, confirmed)
    assert before["unsubscribed_at"] and before["profile_completed_at"] and before["phone"]
    stored, events = _stored(newsletter_service, confirmed), outbox(newsletter_service)
    result = patch(newsletter_client, auth, confirmed, before)
    assert result.status_code == 200, result.json
    assert result.json == before
    assert _get(newsletter_client, auth, confirmed) == before
    assert _stored(newsletter_service, confirmed) == stored  # updated_at included
    assert outbox(newsletter_service) == events


@pytest.mark.parametrize("consent", [None, CONSENT], ids=["pending", "confirmed"])
def test_a_get_body_without_status_sent_back_changes_nothing(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, consent: Any
) -> None:
    email = "round@example.org"
    post(newsletter_client, auth, {"email": email, **PROFILE, "consent": consent})
    before = _get(newsletter_client, auth, email)
    assert ("confirm_url" in before) is (consent is None)
    stored, events = _stored(newsletter_service, email), outbox(newsletter_service)
    body = {name: value for name, value in before.items() if name != "status"}
    result = patch(newsletter_client, auth, email, body)
    assert result.status_code == 200, result.json
    assert result.json == before
    assert _stored(newsletter_service, email) == stored
    assert outbox(newsletter_service) == events


def test_a_get_body_sent_back_with_a_changed_field_changes_only_that_field(
    newsletter_client: Any, auth: dict[str, str], confirmed: str
) -> None:
    before = _get(newsletter_client, auth, confirmed)
    body = {name: value for name, value in before.items() if name != "status"}
    result = patch(newsletter_client, auth, confirmed, {**body, "zip": "54321"})
    assert result.status_code == 200, result.json
    assert result.json == {**before, "zip": "54321"}


@pytest.mark.parametrize("status", ["confirmed", "pending"])
def test_status_other_than_unsubscribed_is_refused_even_as_its_current_value(
    newsletter_client: Any, auth: dict[str, str], status: str
) -> None:
    email = f"{status}@example.org"
    post(
        newsletter_client,
        auth,
        {"email": email, **({"consent": CONSENT} if status == "confirmed" else {})},
    )
    before = _get(newsletter_client, auth, email)
    assert before["status"] == status
    result = patch(newsletter_client, auth, email, {**before, "zip": "54321"})
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert result.json["message"].startswith("status ")
    assert "leave it out" in result.json["message"]
    assert _get(newsletter_client, auth, email) == before


def _shifted(stamp: str) -> str:
    """The same instant written with a +02:00 offset and explicit microseconds."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment.astimezone(timezone(timedelta(hours=2))).isoformat(timespec="microseconds")


def test_echoes_are_compared_as_the_same_email_and_the_same_instants(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, confirmed: str
) -> None:
    before = _get(newsletter_client, auth, confirmed)
    stored = _stored(newsletter_service, confirmed)
    body = {
        "email": confirmed.upper(),
        "created_at": _shifted(before["created_at"]),
        "confirmed_at": _shifted(before["confirmed_at"]),
        "profile_completed_at": before["profile_completed_at"].replace("Z", "+00:00"),
        "unsubscribed_at": None,
        "confirm_url": None,
    }
    result = patch(newsletter_client, auth, confirmed, body)
    assert result.status_code == 200, result.json
    assert result.json == before
    assert _stored(newsletter_service, confirmed) == stored


def _different(name: str, current: dict[str, Any]) -> list[Any]:
    """Values of read-only field ``name`` that are not its current one."""
    value = current.get(name)
    if name == "email":
        return ["other@example.org", 5, "", None]
    if name.endswith("_at"):
        later = "2031-01-01T00:00:00Z"
        if value is None:
            return [later, "not a time", 0]
        return [later, None, value.replace("Z", ""), value[:10], "", ["x"]]
    if value is None:  # confirm_url of a confirmed subscriber
        return ["https://news.example.test/newsletter/confirm/x", ""]
    return [value + "x", value.upper(), None, "", {"url": value}]


@pytest.mark.parametrize("name", READ_ONLY_FIELDS)
def test_a_read_only_field_with_another_value_is_invalid_request_naming_it(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, confirmed: str, name: str
) -> None:
    before = _get(newsletter_client, auth, confirmed)
    stored = _stored(newsletter_service, confirmed)
    for value in _different(name, before):
        result = patch(newsletter_client, auth, confirmed, {"zip": "54321", name: value})
        assert result.status_code == 400, (name, value)
        assert result.json == {
            "error": "invalid_request",
            "message": f"{name} is read-only: send its current value or leave it out",
        }
    assert _get(newsletter_client, auth, confirmed) == before
    assert _stored(newsletter_service, confirmed) == stored


def test_the_openapi_document_lets_a_patch_carry_the_read_only_fields(
    newsletter_client: Any,
) -> None:
    document = newsletter_client.simulate_get("/api/newsletter/v1/openapi.json").json
    properties = document["components"]["schemas"]["PatchRequest"]["properties"]
    for name in READ_ONLY_FIELDS:
        assert "read-only: accepted only with its current value" in properties[name]["description"]
    assert properties["status"]["enum"] == ["unsubscribed"]
