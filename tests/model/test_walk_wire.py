"""The walk endpoints' bodies: the encoder's bytes of what the model's serializers build.

- timestamps are ISO-8601 UTC with ``Z`` (microseconds only when non-zero), whatever the
  record's offset;
- ``GET /subscribers`` and ``GET /api/export/events`` bodies are ``json_encoding.dumps`` of the
  serializers' output: compact, UTF-8, non-ASCII as itself.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from newsletter_connector.json_encoding import dumps
from newsletter_connector.model.analytics import event_wire
from newsletter_connector.storage.records import AnalyticsEventRecord
from tests.support.analytics_helpers import client_for, clocked_service, connect
from tests.support.subscriber_helpers import SUBSCRIBERS, post

T0 = datetime(2026, 3, 1, 12, 0, 0)


def test_event_wire_writes_timestamps_in_utc_with_z() -> None:
    for moment, text in [
        (datetime(2026, 3, 1, 12, 0, 0), b'"2026-03-01T12:00:00Z"'),
        (datetime(2026, 3, 1, 12, 0, 0, 1), b'"2026-03-01T12:00:00.000001Z"'),
        (
            datetime(2026, 3, 1, 7, 0, tzinfo=timezone(timedelta(hours=-5))),
            b'"2026-03-01T12:00:00Z"',
        ),
    ]:
        event = AnalyticsEventRecord(1, moment, "pageview", "v", "s", "/ü", "", {}, None)
        assert b'"occurred_at":' + text in dumps(event_wire(event))
        assert event_wire(event)["props"] is None


def test_subscriber_page_is_the_encoding_of_the_contacts(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    for body in (
        {"email": "zoe@example.org", "zip": "02134"},
        {
            "email": "b@example.org",
            "consent": {"source": "form", "collected_at": "2026-01-01T08:00:00Z"},
        },
    ):
        assert post(newsletter_client, auth, body).status_code in (200, 201)
    name = "Zoë 😀 \u2028 Ø"
    newsletter_service.subscribers.update("b@example.org", {"first_name": name})
    cursor = None
    for _ in range(2):
        params = {"limit": 1, **({"cursor": cursor} if cursor else {})}
        result = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth, params=params)
        page = newsletter_service.subscribers.list_page(None, cursor, 1)
        contacts = [newsletter_service.subscribers.contact(record) for record in page.items]
        expected = {"data": contacts, "next_cursor": page.next_cursor}
        assert result.headers["content-type"] == "application/json"
        assert result.content == dumps(expected)
        cursor = page.next_cursor
    assert name.encode() in result.content  # non-ASCII as UTF-8, not \u escapes
    assert b'"created_at":"' in result.content and b'Z","confirmed_at":' in result.content
    assert result.json["data"][0]["first_name"] == name


def test_export_page_is_the_encoding_of_the_events(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service = clocked_service(newsletter_settings, newsletter_storage, T0)[0]
    headers = connect(service)
    for props in ({"n": 1.5, "ok": True}, {"tiny": 1e-05}, {"label": "café ☕"}, None):
        service.analytics.record_event(
            "pageview", visitor_id="visitor-1", session_id="session-1", path="/a", props=props
        )
    client = client_for(service)
    with service.storage.transaction(write=False) as uow:
        events = uow.analytics.events_after(0, 10)
    for after_id, limit in [(0, 1000), (events[0].id, 1), (0, 1)]:
        result = client.simulate_get(
            "/api/export/events", headers=headers, params={"after_id": after_id, "limit": limit}
        )
        page = [e for e in events if e.id > after_id][:limit]
        expected = {"events": [event_wire(e) for e in page], "next_after_id": page[-1].id}
        assert result.content == dumps(expected)
        assert result.headers["cache-control"] == "no-store"
    assert (
        b'"tiny":0.00001'  # orjson's form of 1e-05
        in client.simulate_get("/api/export/events", headers=headers, params={"limit": 10}).content
    )
    assert json.loads(result.content)["events"][0]["props"] == {"n": 1.5, "ok": True}
