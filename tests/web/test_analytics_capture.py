"""Analytics capture (docs/analytics.md) through the public endpoint; no personal data is ever
stored."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from tests.support.analytics_helpers import client_for, clocked_service

T0 = datetime(2026, 5, 4, 10, 0, 0)
COLLECT = "/analytics/collect"
IDS = {"visitor_id": "v_0123456789abcdef", "session_id": "s-0123456789"}


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, T0)[0]


@pytest.fixture
def client(service: Any) -> Any:
    return client_for(service)


def stored(service: Any) -> list[Any]:
    return service.analytics.events_page(0, 1000).events


def post(client: Any, body: Any, content_type: str = "application/json") -> Any:
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.simulate_post(COLLECT, body=data, headers={"Content-Type": content_type})


def test_pageview_is_recorded(client: Any, service: Any) -> None:
    result = post(
        client,
        {
            "type": "pageview",
            "path": "/news/today",
            **IDS,
            "referrer": "https://www.search.example/results",
        },
    )
    assert result.status_code == 204
    assert result.content == b""
    (event,) = stored(service)
    assert (event.event_type, event.path, event.referrer) == (
        "pageview",
        "/news/today",
        "https://www.search.example/results",
    )
    assert (event.visitor_id, event.session_id) == (IDS["visitor_id"], IDS["session_id"])
    assert event.occurred_at == T0  # server time, never the client's
    assert event.props is None


def test_send_beacon_text_plain_is_accepted(client: Any, service: Any) -> None:
    body = json.dumps({"type": "pageview", "path": "/", **IDS})
    assert post(client, body, "text/plain;charset=UTF-8").status_code == 204
    assert len(stored(service)) == 1


def test_query_strings_and_fragments_are_stripped(client: Any, service: Any) -> None:
    post(
        client,
        {
            "type": "link click",
            **IDS,
            "path": "/story?utm_source=x&email=a@b.example#top",
            "referrer": "https://user:pw@Search.Example:8443/q?q=john+smith#frag",
            "href": "https://other.example/page?token=secret#x",
        },
    )
    (event,) = stored(service)
    assert event.path == "/story"
    assert event.referrer == "https://search.example:8443/q"
    assert event.props == {"href": "https://other.example/page"}


def test_absolute_url_as_path_keeps_only_the_path(client: Any, service: Any) -> None:
    post(client, {"type": "pageview", **IDS, "path": "https://news.example/a/b?x=1"})
    assert stored(service)[0].path == "/a/b"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/profile/jane.doe@example.com/edit", "/profile/redacted/edit"),
        ("/profile/jane.doe%40example.com", "/profile/redacted"),
        ("/call/+1-555-123-4567", "/call/redacted"),
        ("/call/(555)%20123-4567", "/call/redacted"),
        ("/sms/5551234567", "/sms/redacted"),
        ("/2026-05-04/story-12345", "/2026-05-04/story-12345"),
        ("/story/1234567", "/story/1234567"),
        ("/archive/2026/05/04", "/archive/2026/05/04"),
    ],
)
def test_path_segments_that_look_personal_are_redacted(
    client: Any, service: Any, path: str, expected: str
) -> None:
    assert post(client, {"type": "pageview", **IDS, "path": path}).status_code == 204
    assert stored(service)[0].path == expected


def test_referrer_with_an_address_is_redacted(client: Any, service: Any) -> None:
    post(
        client,
        {
            "type": "pageview",
            **IDS,
            "path": "/",
            "referrer": "https://mail.example/u/jane@example.com/inbox",
        },
    )
    assert stored(service)[0].referrer == "https://mail.example/u/redacted/inbox"


def test_mailto_and_tel_links_keep_only_the_scheme(client: Any, service: Any) -> None:
    post(client, {"type": "link click", **IDS, "path": "/", "href": "mailto:jane@example.com"})
    post(client, {"type": "link click", **IDS, "path": "/", "href": "tel:+15551234567"})
    assert [e.props for e in stored(service)] == [{"href": "mailto:"}, {"href": "tel:"}]


def test_props_that_look_personal_are_dropped(client: Any, service: Any) -> None:
    post(
        client,
        {
            "type": "pageview",
            **IDS,
            "path": "/",
            "props": {
                "section": "local",
                "contact": "jane@example.com",
                "phone": "+44 20 7946 0958",
                "mobile": "555-123-4567",
                "score": 3,
                "ratio": 0.5,
                "flag": True,
                "nothing": None,
            },
        },
    )
    assert stored(service)[0].props == {
        "section": "local",
        "score": 3,
        "ratio": 0.5,
        "flag": True,
        "nothing": None,
    }


def test_engagement_ping_records_seconds(client: Any, service: Any) -> None:
    post(client, {"type": "engagement ping", **IDS, "path": "/a", "seconds": 42})
    (event,) = stored(service)
    assert event.engaged_seconds == 42.0
    assert event.props == {"engaged_seconds": 42.0}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "purchase", "path": "/", **IDS}, "type"),
        ({"type": "Pageview", "path": "/", **IDS}, "type"),
        ({"type": "link_click", "path": "/", **IDS}, "type"),
        ({"path": "/", **IDS}, "type"),
        ({"type": "pageview", **IDS}, "path"),
        ({"type": "pageview", "path": "relative", **IDS}, "path"),
        ({"type": "pageview", "path": 5, **IDS}, "path"),
        ({"type": "pageview", "path": "/a\x00b", **IDS}, "path"),
        ({"type": "pageview", "path": "/" + "a" * 1024, **IDS}, "path"),
        (
            {
                "type": "pageview",
                "path": "/",
                "visitor_id": "jane@example.com",
                "session_id": IDS["session_id"],
            },
            "visitor_id",
        ),
        (
            {"type": "pageview", "path": "/", "visitor_id": "short", "session_id": "s" * 10},
            "visitor_id",
        ),
        ({"type": "pageview", "path": "/", "visitor_id": "v" * 10}, "session_id"),
        (
            {"type": "pageview", "path": "/", "visitor_id": "v" * 10, "session_id": "s" * 65},
            "session_id",
        ),
        ({"type": "pageview", "path": "/", **IDS, "referrer": "not a url"}, "referrer"),
        ({"type": "pageview", "path": "/", **IDS, "referrer": "https://"}, "referrer"),
        (
            {"type": "pageview", "path": "/", **IDS, "referrer": "https://x.example:99999/"},
            "referrer",
        ),
        ({"type": "pageview", "path": "/", **IDS, "referrer": ["x"]}, "referrer"),
        ({"type": "link click", "path": "/", **IDS}, "href"),
        ({"type": "link click", "path": "/", **IDS, "href": "/relative"}, "href"),
        ({"type": "pageview", "path": "/", **IDS, "href": "https://x.example/"}, "href"),
        ({"type": "engagement ping", "path": "/", **IDS}, "seconds"),
        ({"type": "engagement ping", "path": "/", **IDS, "seconds": -1}, "seconds"),
        ({"type": "engagement ping", "path": "/", **IDS, "seconds": 86401}, "seconds"),
        ({"type": "engagement ping", "path": "/", **IDS, "seconds": "5"}, "seconds"),
        ({"type": "engagement ping", "path": "/", **IDS, "seconds": True}, "seconds"),
        ({"type": "pageview", "path": "/", **IDS, "seconds": 3}, "seconds"),
        ({"type": "pageview", "path": "/", **IDS, "props": []}, "props"),
        ({"type": "pageview", "path": "/", **IDS, "props": {"Bad Key": 1}}, "props"),
        (
            {"type": "pageview", "path": "/", **IDS, "props": {f"k{n}": n for n in range(11)}},
            "props",
        ),
        ({"type": "pageview", "path": "/", **IDS, "props": {"a": "x" * 201}}, "props.a"),
        ({"type": "pageview", "path": "/", **IDS, "props": {"a": {"nested": 1}}}, "props.a"),
        ({"type": "pageview", "path": "/", **IDS, "props": {"href": "x"}}, "props.href"),
        ({"type": "pageview", "path": "/", **IDS, "props": {"a": 2**60}}, "props.a"),
        ({"type": "pageview", "path": "/", **IDS, "email": "a@b.example"}, "email"),
        ([1, 2], "body"),
        ("not json", "body"),
        ("", "body"),
    ],
)
def test_bad_events_are_refused_with_400_naming_the_field(
    client: Any, service: Any, body: Any, field: str
) -> None:
    result = post(client, body)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]
    assert stored(service) == []


def test_non_finite_json_numbers_are_refused(client: Any, service: Any) -> None:
    raw = (
        '{"type":"engagement ping","path":"/","visitor_id":"v_0123456789abcdef",'
        '"session_id":"s-0123456789","seconds":NaN}'
    )
    assert post(client, raw).status_code == 400
    assert stored(service) == []


def test_invalid_utf8_is_400(client: Any, service: Any) -> None:
    assert post(client, b"\xff\xfe{}").status_code == 400


def test_oversized_body_is_413(client: Any, service: Any) -> None:
    body = {"type": "pageview", "path": "/", **IDS, "props": {"a": "x" * 5000}}
    result = post(client, body)
    assert result.status_code == 413
    assert result.json["error"] == "invalid_request"
    assert stored(service) == []


def test_other_media_types_are_415(client: Any, service: Any) -> None:
    result = post(client, "type=pageview", "application/x-www-form-urlencoded")
    assert result.status_code == 415
    assert stored(service) == []


def test_get_on_collect_is_405_not_500(client: Any) -> None:
    assert client.simulate_get(COLLECT).status_code == 405


def test_script_is_served(client: Any) -> None:
    result = client.simulate_get("/analytics.js")
    assert result.status_code == 200
    assert result.headers["content-type"].startswith("text/javascript")
    assert "max-age=3600" in result.headers["cache-control"]
    script = result.text
    for needle in (
        '"pageview"',
        '"link click"',
        '"engagement ping"',
        "analytics/collect",
        "sendBeacon",
        "localStorage",
        "sessionStorage",
        "doNotTrack",
    ):
        assert needle in script
    assert "cookie" not in script.lower().replace("no cookies", "")


def test_events_the_script_sends_are_accepted(client: Any, service: Any) -> None:
    # The exact bodies analytics.js builds (see its send()): text/plain JSON.
    base = {
        "visitor_id": "0123456789abcdef0123456789abcdef",
        "session_id": "fedcba9876543210fedcba9876543210",
        "path": "/news",
    }
    for body in (
        {"type": "pageview", "referrer": "", **base},
        {"type": "link click", "href": "https://elsewhere.example/a", **base},
        {"type": "engagement ping", "seconds": 17, **base},
    ):
        assert post(client, json.dumps(body), "text/plain;charset=UTF-8").status_code == 204
    assert [e.event_type for e in stored(service)] == ["pageview", "link click", "engagement ping"]
