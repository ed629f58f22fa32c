"""The walk endpoints' fast paths (issue 10) send exactly what the reference serializers give.

- ``event_wire`` equals the ``AnalyticsEvent`` model's dump for every record;
- ``GET /subscribers`` and ``GET /api/export/events`` bodies are byte-for-byte the stdlib
  encoding (the app's JSON form) of the reference serializers' output.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from newsletter_connector.model.analytics import AnalyticsEvent, event_wire
from newsletter_connector.storage import AnalyticsEventRecord
from newsletter_connector.web.fast_json import STDLIB_DUMPS

from .analytics_helpers import client_for, clocked_service, connect
from .subscriber_helpers import SUBSCRIBERS, post

T0 = datetime(2026, 3, 1, 12, 0, 0)

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
_prop_value = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats()  # NaN and infinities too: the model turns them into null
    | _text
    | st.lists(st.integers(), max_size=2)  # not what capture stores: goes through the model
)
_moments = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)
) | st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5, minutes=-30))]),
)
_records = st.builds(
    AnalyticsEventRecord,
    id=st.integers(min_value=1, max_value=2**63 - 1) | st.booleans(),
    occurred_at=_moments | st.sampled_from([T0, T0.replace(microsecond=1)]),
    event_type=st.sampled_from(["pageview", "link click", "engagement ping"]),
    visitor_id=_text,
    session_id=_text,
    path=_text,
    referrer=_text,
    props=st.none() | st.dictionaries(st.text(max_size=5), _prop_value, max_size=3),
    engaged_seconds=st.none() | st.floats(min_value=0, max_value=86_400),
)


def _model(event: AnalyticsEventRecord) -> dict[str, Any]:
    return AnalyticsEvent.from_record(event).to_wire()


@given(_records)
def test_event_wire_equals_the_model(event: AnalyticsEventRecord) -> None:
    fast = event_wire(event)
    assert STDLIB_DUMPS(fast) == STDLIB_DUMPS(_model(event))  # same values, types, key order


def test_event_wire_keeps_timestamps_as_the_model_does() -> None:
    for moment, text in [
        (datetime(2026, 3, 1, 12, 0, 0), "2026-03-01T12:00:00Z"),
        (datetime(2026, 3, 1, 12, 0, 0, 1), "2026-03-01T12:00:00.000001Z"),
        (datetime(2026, 3, 1, 7, 0, tzinfo=timezone(timedelta(hours=-5))), "2026-03-01T12:00:00Z"),
    ]:
        event = AnalyticsEventRecord(1, moment, "pageview", "v", "s", "/ü", "", {}, None)
        assert event_wire(event)["occurred_at"] == text == _model(event)["occurred_at"]
        assert event_wire(event)["props"] is None


def test_subscriber_page_is_the_stdlib_encoding_of_the_contacts(
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
        assert result.content == STDLIB_DUMPS(expected).encode()
        cursor = page.next_cursor
    assert name.encode() in result.content  # non-ASCII as UTF-8, not \u escapes
    assert result.json["data"][0]["first_name"] == name


def test_export_page_is_the_stdlib_encoding_of_the_model_events(
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
        expected = {"events": [_model(e) for e in page], "next_after_id": page[-1].id}
        assert result.content == STDLIB_DUMPS(expected).encode()  # 1e-05 as the stdlib writes it
        assert result.headers["cache-control"] == "no-store"
    assert (
        b'"tiny":1e-05'
        in client.simulate_get("/api/export/events", headers=headers, params={"limit": 10}).content
    )
    assert json.loads(result.content)["events"][0]["props"] == {"n": 1.5, "ok": True}
