"""The contact serializer's hand-written parts stay in step with what they spell out, and the
contact an API response carries is the payload pushed in ``newsletter.*`` events
(docs/newsletter-api.md, "Events queued by these operations")."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx

from newsletter_connector import Settings
from newsletter_connector.json_encoding import dumps
from newsletter_connector.model.contact import EMAIL_PREF_FIELDS, contact_payload
from newsletter_connector.storage.records import EmailPrefs, SubscriberData
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.subscriber_helpers import SUBSCRIBERS, post

AT = datetime(2026, 11, 21, 9, 30)


def record(**changes: object) -> SubscriberData:
    """A confirmed subscriber created at ``AT``, with ``changes``."""
    return make_subscriber_data(
        "reader@example.org", **{"status": "confirmed", "created_at": AT, **changes}
    )


SETTINGS = Settings(base_url="https://news.example/newsletter")


def test_contact_prefs_follow_the_fields() -> None:
    prefs = EmailPrefs(briefings="weekly", puzzles="off", on_this_day="daily", local="weekly")
    contact = contact_payload(record(prefs=prefs), SETTINGS)
    expected = {wire: getattr(prefs, attr) for wire, attr in EMAIL_PREF_FIELDS}
    assert list(contact["prefs"]["email"].items()) == list(expected.items())


def test_optional_timestamps_are_null_or_utc_with_z() -> None:
    empty = contact_payload(record(), SETTINGS)
    assert empty["profile_completed_at"] is None
    assert empty["confirmed_at"] is None
    assert empty["unsubscribed_at"] is None
    written = {
        "profile_completed_at": "2026-11-22T08:00:00.000250Z",
        "confirmed_at": "2026-11-22T08:00:01Z",
        "unsubscribed_at": "2026-11-22T08:00:02.500000Z",
    }
    full = dumps(
        contact_payload(
            record(**{name: datetime.fromisoformat(text[:-1]) for name, text in written.items()}),
            SETTINGS,
        )
    )
    for name, text in written.items():
        assert f'"{name}":"{text}"'.encode() in full
    assert b'"created_at":"2026-11-21T09:30:00Z"' in full
    east = datetime(2026, 11, 21, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    assert b'"created_at":"2026-11-21T09:30:00Z"' in dumps(
        contact_payload(record(created_at=east), SETTINGS)
    )


# -- the API's contact and the pushed payload, through the real edges ---------------------------


def _pushed_payloads(content: bytes) -> list[bytes]:
    """The exact bytes of each ``payload`` in an ``events`` transport body."""
    text = content.decode("utf-8")
    decoder = json.JSONDecoder()
    payloads = []
    at = text.find('"payload":')
    while at != -1:
        start = at + len('"payload":')
        end = decoder.raw_decode(text, start)[1]
        payloads.append(text[start:end].encode("utf-8"))
        at = text.find('"payload":', end)
    return payloads


def test_the_api_contact_is_the_pushed_payload_byte_for_byte(
    newsletter_service: Any, newsletter_client: Any, auth: dict[str, str]
) -> None:
    service = newsletter_service
    service.admin.set_connection(
        platform_base="https://platform.example.test", transport="events", token="t" * 24
    )
    signup = post(newsletter_client, auth, {"email": "Reader@Example.org", "zip": "02134"})
    record = service.subscribers.get("reader@example.org")
    service.subscribers.update_profile_by_token(
        record.profile_token,
        {
            "first_name": "Zoë \u2028 😀",
            "prefs": {"sms": {"enabled": True}},
            "phone": "+1 555 0100",
        },
    )
    got = newsletter_client.simulate_get(f"{SUBSCRIBERS}/reader%40example.org", headers=auth)
    assert got.status_code == 200

    requests: list[httpx.Request] = []

    def platform(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200)

    runner = SyncRunner(
        service, periodic_tasks=[], http_transport=lambda: httpx.MockTransport(platform)
    )
    try:
        runner.run_once()
    finally:
        runner.close()
    pushed = [payload for request in requests for payload in _pushed_payloads(request.content)]
    # newsletter.signup (pending), then newsletter.profile_completed.
    assert pushed == [signup.content, got.content]
    assert "Zoë \u2028 😀".encode() in got.content
    assert b'"phone":"+1 555 0100"' in got.content
    assert re.search(
        rb'"profile_completed_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z"', got.content
    )
