"""Property tests: no query string on the export endpoints and no capture body gives a 500."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from newsletter_connector.service.analytics_sanitize import looks_personal
from tests.support.analytics_helpers import client_for, clocked_service, connect
from tests.support.examples import examples

pytestmark = pytest.mark.system  # generated cases

SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.fixture
def env(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    service, _ = clocked_service(newsletter_settings, newsletter_storage, datetime(2026, 1, 1))
    auth = connect(service)
    service.analytics.record_event(
        "pageview", visitor_id="visitor-1", session_id="session-1", path="/"
    )
    return service, client_for(service), auth


# The export surface's answers, written from docs/export.md (not from the app's models).
_INT = {"type": "integer", "minimum": 0}
_STAMP = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$"}


def _object(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_EVENT = _object(
    id=_INT,
    occurred_at=_STAMP,
    event_type={"enum": ["pageview", "link click", "engagement ping"]},
    visitor_id={"type": "string"},
    session_id={"type": "string"},
    path={"type": "string"},
    referrer={"type": "string"},
    props={"type": ["object", "null"]},
)
_ROLLUP = _object(
    date={"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    source={"type": "string"},
    pageviews=_INT,
    unique_visitors=_INT,
    new_visitors=_INT,
    sessions=_INT,
    issue_number=_INT,
    top_pages={
        "type": "array",
        "maxItems": 10,
        "items": _object(path={"type": "string"}, views=_INT),
    },
    link_clicks=_INT,
    avg_engagement_seconds={"type": ["number", "null"]},
    llm_usage=_object(
        calls=_INT,
        failures=_INT,
        by_model={
            "type": "array",
            "items": _object(
                model={"type": "string"},
                calls=_INT,
                failures=_INT,
                prompt_tokens=_INT,
                completion_tokens=_INT,
            ),
        },
    ),
    ga4={"type": "null"},
)
ANSWERS = {
    "status": _object(ok={"const": True}),
    "events": _object(events={"type": "array", "items": _EVENT}, next_after_id=_INT),
    "rollups": _object(rollups={"type": "array", "maxItems": 92, "items": _ROLLUP}),
}


def test_the_answer_schemas_refuse_a_wrong_answer() -> None:
    event = {
        "id": 1, "occurred_at": "2026-01-01T00:00:00Z", "event_type": "pageview",
        "visitor_id": "v", "session_id": "s", "path": "/", "referrer": "", "props": None,
    }  # fmt: skip
    jsonschema.validate({"events": [event], "next_after_id": 1}, ANSWERS["events"])
    for wrong in (
        {**event, "occurred_at": "2026-01-01T00:00:00+00:00"},
        {**event, "extra": 1},
        {k: v for k, v in event.items() if k != "props"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"events": [wrong], "next_after_id": 1}, ANSWERS["events"])


names = st.sampled_from(["after_id", "limit", "from", "to", "x", ""]) | st.text(max_size=8)
values = (
    st.integers(-(2**70), 2**70).map(str)
    | st.dates().map(date.isoformat)
    | st.text(max_size=20)
    | st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True)
)
queries = st.lists(st.tuples(names, values), max_size=4).map(
    lambda pairs: "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
)
raw_queries = st.text(max_size=60).map(lambda s: quote(s, safe="=&%+"))


@SETTINGS
@given(path=st.sampled_from(["status", "events", "rollups"]), query=queries | raw_queries)
def test_export_queries_never_fail_with_500(env: Any, path: str, query: str) -> None:
    _, client, auth = env
    result = client.simulate_get(f"/api/export/{path}", headers=auth, query_string=query)
    assert result.status_code in (200, 400), (query, result.text)
    body = result.json
    if result.status_code == 400:
        assert set(body) == {"error", "message"} and body["error"] == "invalid_request"
    else:
        jsonschema.validate(body, ANSWERS[path])
    without_token = client.simulate_get(f"/api/export/{path}", query_string=query)
    assert without_token.status_code == 404


@SETTINGS
@given(first=st.dates(), second=st.dates())
def test_any_pair_of_real_dates_is_200_or_a_clear_400(env: Any, first: date, second: date) -> None:
    _, client, auth = env
    result = client.simulate_get(
        "/api/export/rollups",
        headers=auth,
        params={"from": first.isoformat(), "to": second.isoformat()},
    )
    span = (second - first).days + 1
    if 1 <= span <= 92:
        assert result.status_code == 200
        jsonschema.validate(result.json, ANSWERS["rollups"])
        assert [r["date"] for r in result.json["rollups"]] == [
            date.fromordinal(first.toordinal() + n).isoformat() for n in range(span)
        ]
    else:
        assert result.status_code == 400
        assert "to" in result.json["message"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
bodies = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["pageview", "link click", "engagement ping"]) | json_values,
        "visitor_id": st.just("visitor-0001") | json_values,
        "session_id": st.just("session-0001") | json_values,
        "path": st.text(max_size=40).map(lambda s: "/" + s) | json_values,
        "referrer": st.just("https://r.example/a?b") | json_values,
        "href": st.just("https://l.example/") | json_values,
        "seconds": st.floats() | json_values,
        "props": st.dictionaries(st.text(max_size=10), json_values, max_size=4) | json_values,
    },
)


@SETTINGS
@given(body=bodies)
def test_capture_bodies_never_fail_with_500(env: Any, body: dict[str, Any]) -> None:
    service, client, _ = env
    result = client.simulate_post(
        "/analytics/collect", body=json.dumps(body), headers={"Content-Type": "text/plain"}
    )
    assert result.status_code in (204, 400, 413), result.text
    if result.status_code == 204:
        last = service.analytics.events_page(0, 1000).events[-1]
        assert "?" not in last.path and "#" not in last.path
        for segment in (last.path + "/" + last.referrer).split("/"):
            assert not looks_personal(segment)


@SETTINGS
@given(raw=st.binary(max_size=200))
def test_capture_raw_bytes_never_fail_with_500(env: Any, raw: bytes) -> None:
    _, client, _ = env
    result = client.simulate_post(
        "/analytics/collect", body=raw, headers={"Content-Type": "application/json"}
    )
    assert result.status_code in (204, 400)


# Any code point but controls, often with a lone surrogate (st.text leaves them out).
_any_text = st.text(st.characters(codec=None, exclude_categories=("Cc",)), max_size=10)
unicode_text = st.tuples(
    _any_text, st.sampled_from(["", "\ud800", "\udbff", "\udc00", "\udfff"]), _any_text
).map("".join)
scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats() | unicode_text
unicode_bodies = st.fixed_dictionaries(
    {
        "type": st.just("link click"),
        "path": unicode_text.map(lambda s: "/" + s),
        "referrer": unicode_text.map(lambda s: "https://r.example/" + s),
        "href": unicode_text.map(lambda s: "https://l.example/" + s),
        "props": st.dictionaries(
            st.from_regex(r"[a-z]{1,5}", fullmatch=True) | unicode_text, scalars, max_size=3
        ),
    }
)
deep = st.integers(3, 1500).map(lambda n: "[" * n + "]" * n)


def _served_strictly(client: Any, auth: dict[str, str]) -> Any:
    result = client.simulate_get("/api/export/events", headers=auth, params={"limit": "1000"})
    assert result.status_code == 200, result.text
    body = json.loads(result.content.decode("utf-8"), parse_constant=_not_json)
    jsonschema.validate(body, ANSWERS["events"])
    return body


def _not_json(name: str) -> Any:
    raise ValueError(name)


@SETTINGS
@given(body=unicode_bodies, nested=st.none() | deep)
def test_whatever_capture_accepts_the_export_serves(
    env: Any, body: dict[str, Any], nested: str | None
) -> None:
    service, client, auth = env
    body = {**body, "visitor_id": "visitor-0001", "session_id": "session-0001"}
    text = json.dumps(body)  # escapes lone surrogates as \udXXX, as a client's JSON may
    if nested is not None:
        text = text[:-1] + f', "props": {{"x": {nested}}}}}'
    result = client.simulate_post(
        "/analytics/collect", body=text, headers={"Content-Type": "text/plain"}
    )
    assert result.status_code in (204, 400, 413), result.text
    if result.status_code != 204:
        assert result.json["error"] == "invalid_request"
    served = _served_strictly(client, auth)["events"]
    assert len(served) == len(service.analytics.events_page(0, 1000).events)
