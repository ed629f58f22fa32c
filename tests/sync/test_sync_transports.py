"""Both built-in transports' request shapes, row by row (docs/delivery.md, "Transports")."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from newsletter_connector.plugin_manager import build_plugin_manager, outbound_transports, pick
from newsletter_connector.settings import Settings
from newsletter_connector.storage.access_records import ConnectionRecord
from newsletter_connector.storage.outbox_records import OutboxEvent
from newsletter_connector.storage.transport import DeliveryError, Transport
from newsletter_connector.timeutil import isoformat_z
from tests.support import sync_payloads as p

TOKEN = "platform-token-0123456789"
BASE = "https://platform.example.test/base"
AT = datetime(2026, 11, 20, 9, 30, 0)


def event(kind: str, payload: dict[str, Any]) -> OutboxEvent:
    return OutboxEvent.with_payload(
        seq=1, event_id=str(uuid.uuid4()), event_type=kind, occurred_at=AT, payload=payload
    )


def deliver(
    name: str, events: list[OutboxEvent], *, status: int = 200, **settings: Any
) -> list[httpx.Request]:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        requests.append(request)
        return httpx.Response(status)

    connection = ConnectionRecord(
        id=1, platform_base=BASE, transport=name, token=TOKEN, created_at=AT, disabled_at=None
    )
    descriptor = pick("outbound transport", outbound_transports(build_plugin_manager()), name)
    transport = descriptor.factory(connection, httpx.Client(transport=httpx.MockTransport(handler)))
    assert isinstance(transport, Transport)
    if hasattr(transport, "configure"):
        transport.configure(Settings(**settings))
    transport.deliver(events)
    return requests


def body(request: httpx.Request) -> Any:
    return json.loads(request.content)


# -- events transport -------------------------------------------------------------------------


def test_events_transport_sends_one_array_of_id_type_occurred_at_payload() -> None:
    events = [
        event("newsletter.confirmed", p.contact()),
        event("newsletter.issue", p.issue()),
        event("contact.message", p.message()),
        event("analytics.daily_rollup", p.rollup()),
    ]
    (request,) = deliver("events", events)
    assert request.method == "POST"
    assert str(request.url) == f"{BASE}/v1/events"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert body(request) == [
        {
            "id": e.event_id,
            "type": e.event_type,
            "occurred_at": "2026-11-20T09:30:00Z",
            "payload": e.payload,
        }
        for e in events
    ]


def test_events_transport_marks_only_pending_signups_with_confirm() -> None:
    pending = event("newsletter.signup", p.contact(status="pending"))
    confirmed = event("newsletter.signup", p.contact(status="confirmed"))
    (request,) = deliver("events", [pending, confirmed])
    sent = body(request)
    assert sent[0]["confirm"] is True
    assert sent[0]["payload"] == pending.payload  # the contact stays byte-identical
    assert "confirm" not in sent[1]


def test_events_transport_batch_size_is_100() -> None:
    descriptor = pick("outbound transport", outbound_transports(build_plugin_manager()), "events")
    connection = ConnectionRecord(1, BASE, "events", TOKEN, AT, None)
    assert descriptor.factory(connection, httpx.Client()).max_batch_size == 100


@pytest.mark.parametrize("status", [199, 300, 400, 500])
def test_any_non_2xx_fails_the_delivery(status: int) -> None:
    with pytest.raises(DeliveryError, match=str(status)):
        deliver("events", [event("contact.message", p.message())], status=status)


def test_any_2xx_accepts() -> None:
    assert deliver("events", [event("contact.message", p.message())], status=202)


# -- platform transport: one row of the live platform mapping (docs/delivery.md) per test ----------


def test_platform_issue_with_send_now() -> None:
    e = event("newsletter.issue", p.issue())
    (request,) = deliver("platform", [e])
    assert str(request.url) == f"{BASE}/api/v1/sites/ingest/newsletter-issue"
    assert body(request) == {
        "subject": "Your Friday briefing",
        "html": p.issue()["html"],
        "idempotencyKey": e.event_id,
        "sendNow": True,
    }
    assert request.headers["idempotency-key"] == e.event_id
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


def test_platform_issue_queued_for_the_platform_schedule_omits_send_now() -> None:
    (request,) = deliver(
        "platform", [event("newsletter.issue", p.issue())], platform_send_now=False
    )
    assert "sendNow" not in body(request)


@pytest.mark.parametrize("send_now", [True, False])
def test_platform_never_sends_a_test_issue_to_the_issue_endpoint(send_now: bool) -> None:
    """That endpoint mails the issue now, or queues it for the platform's schedule: either
    way readers would get it. The events transport passes it on, marked ``kind: "test"``."""
    test_issue = event("newsletter.issue", {**p.issue(), "kind": "test", "cadence": "test"})
    daily = event("newsletter.issue", p.issue())
    requests = deliver("platform", [test_issue, daily], platform_send_now=send_now)
    assert [body(r)["idempotencyKey"] for r in requests] == [daily.event_id]
    (batch,) = deliver("events", [test_issue, daily])
    assert [e["payload"]["kind"] for e in body(batch)] == ["test", "daily"]


@pytest.mark.parametrize("kind", ["newsletter.confirmed", "newsletter.profile_completed"])
def test_platform_confirmed_and_profile_completed_upsert_with_consent(kind: str) -> None:
    contact = p.contact(profile_completed_at="2026-11-20T09:10:00Z", phone="+15551234567")
    (request,) = deliver("platform", [event(kind, contact)])
    assert str(request.url) == f"{BASE}/api/v1/sites/ingest/newsletter"
    assert body(request) == {
        "email": "reader@example.org",
        "firstName": "Ada",
        "lastName": None,
        "phone": "+15551234567",
        "status": "confirmed",
        "consent": True,
        "fields": {
            "topics": ["health", "money"],
            "frequency": {
                "briefings": "daily",
                "puzzles": "weekly",
                "onThisDay": "off",
                "local": "daily",
            },
            "zip": "02134",
            "ageRange": "65_74",
            "gender": None,
            "genderSelf": None,
            "smsEnabled": False,
            "unsubscribeUrl": contact["unsubscribe_url"],
            "profileUrl": contact["profile_url"],
            "profileCompletedAt": "2026-11-20T09:10:00Z",
        },
    }


@pytest.mark.parametrize("kind", ["newsletter.unsubscribed", "newsletter.bounced"])
def test_platform_unsubscribed_and_bounced_go_to_suppression_with_a_reason(kind: str) -> None:
    reason = kind.split(".")[1]
    (request,) = deliver("platform", [event(kind, p.contact(status=reason))])
    assert str(request.url) == f"{BASE}/api/v1/sites/ingest/unsubscribe"
    assert body(request) == {"email": "reader@example.org", "reason": reason, "status": reason}


def test_platform_pending_signup_upserts_with_confirm_and_redirect_never_consent() -> None:
    contact = p.contact(status="pending")
    (request,) = deliver("platform", [event("newsletter.signup", contact)])
    sent = body(request)
    assert str(request.url) == f"{BASE}/api/v1/sites/ingest/newsletter"
    assert sent["confirm"] is True
    assert sent["confirmRedirectUrl"] == contact["confirm_url"]
    assert sent["status"] == "pending"
    assert "consent" not in sent
    assert "phone" not in sent  # no SMS consent, no phone


def test_platform_contact_message_upsert_never_asserts_consent_or_status() -> None:
    (request,) = deliver("platform", [event("contact.message", p.message())])
    sent = body(request)
    assert str(request.url) == f"{BASE}/api/v1/sites/ingest/newsletter"
    assert sent["email"] == "visitor@example.org"
    assert sent["fields"]["contactMessage"] == "Please cover the bus routes."
    assert sent["fields"]["stream"] == "contact"
    assert "status" in sent and sent["status"] is None
    assert "consent" not in sent and "confirm" not in sent


def test_platform_rollup_is_not_pushed() -> None:
    assert deliver("platform", [event("analytics.daily_rollup", p.rollup())]) == []


def test_platform_every_contact_push_has_status_and_never_consent_with_confirm() -> None:
    events = [
        event("newsletter.signup", p.contact(status="pending")),
        event("newsletter.signup", p.contact(status="confirmed")),
        event("newsletter.confirmed", p.contact()),
        event("newsletter.profile_completed", p.contact()),
        event("newsletter.unsubscribed", p.contact(status="unsubscribed")),
        event("newsletter.bounced", p.contact(status="bounced")),
        event("contact.message", p.message()),
    ]
    requests = deliver("platform", events)
    assert len(requests) == len(events)  # one request per event, in order
    for request, e in zip(requests, events, strict=True):
        sent = body(request)
        assert "status" in sent
        assert not ("consent" in sent and "confirm" in sent)
        assert request.headers["idempotency-key"] == e.event_id


def test_platform_first_failure_fails_the_batch() -> None:
    with pytest.raises(DeliveryError):
        deliver("platform", [event("newsletter.confirmed", p.contact())], status=500)


def stored(kind: str, payload_json: str) -> OutboxEvent:
    return OutboxEvent(1, str(uuid.uuid4()), kind, AT, payload_json)


def test_events_transport_sends_stored_payload_text_unchanged() -> None:
    text = '{"name": "Zoë \\u00e9", "n": 1.50, "nested": {"a": [1, 2]}}'
    (request,) = deliver("events", [stored("contact.message", text)])
    assert f'"payload":{text}}}'.encode() in request.content  # spliced, not re-encoded
    assert body(request)[0]["payload"] == json.loads(text)


def test_events_transport_marks_only_a_pending_signup_with_confirm() -> None:
    pending = p.contact(status="pending")
    events = [
        stored("newsletter.signup", json.dumps(pending)),
        event("newsletter.signup", p.contact(status="confirmed")),
        stored("contact.message", json.dumps(p.message())),
    ]
    (request,) = deliver("events", events)
    assert body(request) == [
        {
            "id": e.event_id,
            "type": e.event_type,
            "occurred_at": "2026-11-20T09:30:00Z",
            **({"confirm": True} if n == 0 else {}),
            "payload": e.payload,
        }
        for n, e in enumerate(events)
    ]
    assert list(body(request)[0]) == ["id", "type", "occurred_at", "confirm", "payload"]


@pytest.mark.parametrize(
    ("occurred_at", "on_the_wire"),
    [
        (datetime(2026, 11, 20, 9, 30, 0), "2026-11-20T09:30:00Z"),
        (datetime(2026, 11, 20, 9, 30, 0, 5), "2026-11-20T09:30:00.000005Z"),
        (datetime(2026, 11, 20, 9, 30, 0, tzinfo=timezone.utc), "2026-11-20T09:30:00Z"),
        (
            datetime(2026, 11, 20, 10, 30, 0, 120000, tzinfo=timezone(timedelta(hours=1))),
            "2026-11-20T09:30:00.120000Z",
        ),
    ],
)
def test_events_transport_writes_times_in_utc_with_z(
    occurred_at: datetime, on_the_wire: str
) -> None:
    sent = OutboxEvent.with_payload(1, "e-1", "contact.message", occurred_at, p.message())
    (request,) = deliver("events", [sent])
    assert body(request)[0]["occurred_at"] == on_the_wire == isoformat_z(occurred_at)


def stored_rows() -> list[tuple[int, str, str, datetime, str]]:
    """Rows as a store fetches them: a pending signup (confirm), an active one, a message; a
    naive time with microseconds, one without, an aware one."""
    aware = datetime(2026, 11, 20, 10, 30, 0, 120000, tzinfo=timezone(timedelta(hours=1)))
    return [
        (1, "e-1", "newsletter.signup", AT, json.dumps(p.contact(status="pending"))),
        (2, "e-2", "newsletter.signup", AT.replace(microsecond=5), json.dumps(p.contact())),
        (3, "e-3", "contact.message", aware, json.dumps(p.message())),
    ]


def test_stored_payloads_go_out_as_stored_text() -> None:
    rows = stored_rows()
    (sent,) = deliver("events", [OutboxEvent(*row) for row in rows])
    for row in rows:
        assert row[4].encode() in sent.content  # the stored text, spliced unchanged
    events = body(sent)
    assert [event.get("confirm") for event in events] == [True, None, None]
    assert events[2]["occurred_at"] == "2026-11-20T09:30:00.120000Z"


def test_outbox_events_from_stored_json_equal_decoded_ones_and_hide_payloads() -> None:
    payload = p.contact(status="pending")
    built = OutboxEvent.with_payload(1, "e-1", "newsletter.signup", AT, payload)
    from_text = OutboxEvent(1, "e-1", "newsletter.signup", AT, json.dumps(payload))
    assert built == from_text
    assert json.loads(built.payload_json) == payload
    assert payload["email"] not in repr(built) + repr(from_text)
    with pytest.raises(AttributeError):
        built.seq = 2  # type: ignore[misc]
    with pytest.raises(ValueError, match="not a JSON object"):
        _ = OutboxEvent(1, "e-2", "x", AT, "[1]").payload
