"""The subscriber lifecycle through the service (what reader pages, the CLI and hosts call)."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.errors import DbUnavailable, InvalidRequest, NotFound
from newsletter_connector.service.subscribers import SIGNUP_ATTEMPTS
from tests.support.subscriber_helpers import events_of, outbox, wire


def _token(contact: dict[str, Any], link: str) -> str:
    return str(contact[link].rsplit("/", 1)[1])


@pytest.fixture
def pending(newsletter_service: Any) -> dict[str, Any]:
    result = newsletter_service.subscribers.subscribe({"email": "Reader@Example.org"})
    return dict(newsletter_service.subscribers.contact(result.record))


def test_links_are_the_reader_page_paths(pending: dict[str, Any]) -> None:
    base = "https://news.example.test/newsletter"
    assert pending["confirm_url"] == f"{base}/confirm/{_token(pending, 'confirm_url')}"
    assert pending["unsubscribe_url"] == f"{base}/unsubscribe/{_token(pending, 'unsubscribe_url')}"
    assert pending["profile_url"] == f"{base}/profile/{_token(pending, 'profile_url')}"


def test_confirm_by_token(newsletter_service: Any, pending: dict[str, Any]) -> None:
    subscribers = newsletter_service.subscribers
    token = _token(pending, "confirm_url")
    assert subscribers.find_by_token("confirm", token).email == "reader@example.org"
    record = subscribers.confirm_by_token(token)
    assert record.status == "confirmed" and record.confirmed_at is not None
    contact = subscribers.contact(record)
    assert "confirm_url" not in contact
    [event] = events_of(newsletter_service, "newsletter.confirmed")
    assert wire(event["payload"]) == wire(contact)
    # Following the link again changes nothing and queues nothing.
    again = subscribers.confirm_by_token(token)
    assert again.confirmed_at == record.confirmed_at
    assert len(events_of(newsletter_service, "newsletter.confirmed")) == 1
    assert subscribers.get("READER@example.org").status == "confirmed"


def test_confirm_link_does_not_revive_an_unsubscribed_reader(
    newsletter_service: Any, pending: dict[str, Any]
) -> None:
    subscribers = newsletter_service.subscribers
    subscribers.unsubscribe("reader@example.org")
    assert subscribers.confirm_by_token(_token(pending, "confirm_url")).status == "unsubscribed"
    assert events_of(newsletter_service, "newsletter.confirmed") == []


@pytest.mark.parametrize("token", ["", "short", "x" * 200, "A" * 32, "../../etc/passwd", None])
def test_unknown_or_malformed_tokens(newsletter_service: Any, token: Any) -> None:
    subscribers = newsletter_service.subscribers
    for kind in ("confirm", "unsubscribe", "profile"):
        assert subscribers.find_by_token(kind, token) is None
    with pytest.raises(NotFound):
        subscribers.confirm_by_token(token)
    with pytest.raises(NotFound):
        subscribers.unsubscribe_by_token(token)
    with pytest.raises(NotFound):
        subscribers.update_profile_by_token(token, {"first_name": "X"})


def test_unsubscribe_by_token(newsletter_service: Any, pending: dict[str, Any]) -> None:
    subscribers = newsletter_service.subscribers
    record = subscribers.unsubscribe_by_token(_token(pending, "unsubscribe_url"))
    assert record.status == "unsubscribed" and record.unsubscribed_at is not None
    [event] = events_of(newsletter_service, "newsletter.unsubscribed")
    assert event["payload"]["status"] == "unsubscribed"
    subscribers.unsubscribe_by_token(_token(pending, "unsubscribe_url"))
    assert len(events_of(newsletter_service, "newsletter.unsubscribed")) == 1


def test_mark_bounced(newsletter_service: Any, pending: dict[str, Any]) -> None:
    subscribers = newsletter_service.subscribers
    record = subscribers.mark_bounced("reader@example.org")
    assert record.status == "bounced" and record.bounced_at is not None
    [event] = events_of(newsletter_service, "newsletter.bounced")
    assert wire(event["payload"]) == wire(subscribers.contact(record))
    assert subscribers.mark_bounced("reader@example.org").status == "bounced"
    assert len(events_of(newsletter_service, "newsletter.bounced")) == 1
    # An unsubscribed address is already suppressed: it stays unsubscribed.
    subscribers.subscribe({"email": "gone@example.org"})
    subscribers.unsubscribe("gone@example.org")
    assert subscribers.mark_bounced("gone@example.org").status == "unsubscribed"
    with pytest.raises(NotFound):
        subscribers.mark_bounced("nobody@example.org")


def test_profile_save_sets_completed_once_and_queues_each_save(
    newsletter_service: Any, pending: dict[str, Any]
) -> None:
    subscribers = newsletter_service.subscribers
    token = _token(pending, "profile_url")
    first = subscribers.update_profile_by_token(
        token, {"first_name": "Ruth", "age_range": "75_84", "prefs": {"email": {"local": "off"}}}
    )
    assert first.profile_completed_at is not None
    assert first.first_name == "Ruth" and first.prefs.local == "off"
    second = subscribers.update_profile_by_token(token, {"categories": ["health"]})
    assert second.profile_completed_at == first.profile_completed_at
    assert second.first_name == "Ruth"
    events = events_of(newsletter_service, "newsletter.profile_completed")
    assert len(events) == 2
    assert wire(events[-1]["payload"]) == wire(subscribers.contact(second))
    with pytest.raises(InvalidRequest) as raised:
        subscribers.update_profile_by_token(token, {"status": "unsubscribed"})
    assert raised.value.field == "status"
    with pytest.raises(InvalidRequest) as raised:
        subscribers.update_profile_by_token(token, {"zip": "1"})
    assert raised.value.field == "zip"


def test_failed_operation_changes_nothing(newsletter_service: Any, pending: dict[str, Any]) -> None:
    before = outbox(newsletter_service)
    with pytest.raises(InvalidRequest):
        newsletter_service.subscribers.update("reader@example.org", {"zip": "12345", "x": 1})
    assert newsletter_service.subscribers.get("reader@example.org").zip is None
    assert outbox(newsletter_service) == before


def test_record_repr_hides_tokens_and_phone(newsletter_service: Any) -> None:
    result = newsletter_service.subscribers.subscribe(
        {"email": "r@example.org", "phone": "5550100999", "prefs": {"sms": {"enabled": True}}}
    )
    text = repr(result)
    record = result.record
    for secret in (
        record.confirm_token,
        record.unsubscribe_token,
        record.profile_token,
        "5550100999",
    ):
        assert secret not in text


def test_list_page_validates_like_the_api(newsletter_service: Any) -> None:
    subscribers = newsletter_service.subscribers
    for kwargs, field in [
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"status": "gone"}, "status"),
        ({"cursor": "zzz"}, "cursor"),
    ]:
        with pytest.raises(InvalidRequest) as raised:
            subscribers.list_page(**kwargs)
        assert raised.value.field == field


def test_signup_retries_when_its_address_was_erased_between_insert_and_look_up(
    newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The insert found the address taken, and the subscriber holding it was erased before
    the look-up: the address is free again, so the signup inserts once more."""
    storage = newsletter_service.storage
    add = storage.add_subscriber
    calls: list[int] = []

    def taken_once(data: Any, events: Any, **guard: Any) -> Any:
        calls.append(len(events))
        return None if len(calls) == 1 else add(data, events, **guard)

    monkeypatch.setattr(storage, "add_subscriber", taken_once)
    result = newsletter_service.subscribers.subscribe({"email": "gone@example.org"})
    assert result.created and calls == [1, 1]
    assert [e["type"] for e in outbox(newsletter_service)] == ["newsletter.signup"]


def test_a_signup_racing_erasures_gives_up_after_a_few_attempts(
    newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taken at every insert and gone at every look-up: the signup answers "try again"
    (db_unavailable, 503) instead of spinning, and stores nothing."""
    storage = newsletter_service.storage
    attempts: list[int] = []

    def always_taken(data: Any, events: Any, **guard: Any) -> Any:
        attempts.append(len(events))
        return None

    monkeypatch.setattr(storage, "add_subscriber", always_taken)
    with pytest.raises(DbUnavailable, match="try again"):
        newsletter_service.subscribers.subscribe({"email": "flicker@example.org"})
    assert len(attempts) == SIGNUP_ATTEMPTS
    assert outbox(newsletter_service) == []
