"""Capture refuses (docs/analytics.md, "What is stripped at capture") what could poison the export
and strips what could identify a reader: lone surrogates, deep nesting, oversize bodies, action-link
tokens, phone-like numbers and ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

from newsletter_connector.web.analytics_capture import MAX_BODY_BYTES, MAX_NESTING, nesting_depth
from tests.web.test_analytics_capture import COLLECT, IDS, stored


@pytest.fixture
def service(newsletter_service: Any) -> Any:
    return newsletter_service


@pytest.fixture
def client(newsletter_client: Any) -> Any:
    return newsletter_client


def post_text(client: Any, text: str) -> Any:
    return client.simulate_post(COLLECT, body=text, headers={"Content-Type": "text/plain"})


def pageview(**fields: Any) -> dict[str, Any]:
    return {"type": "pageview", "path": "/a", **IDS, **fields}


def assert_refused(result: Any, service: Any, field: str) -> None:
    assert result.status_code == 400, result.text
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]
    assert stored(service) == []


# -- text that is not valid Unicode ------------------------------------------------------------

SURROGATE_BODIES = {
    "path": '{"type":"pageview","path":"/a\\ud800","visitor_id":"v_0123456789abcdef",'
    '"session_id":"s-0123456789"}',
    "referrer": '{"type":"pageview","path":"/a","referrer":"https://r\\udfff.example/",'
    '"visitor_id":"v_0123456789abcdef","session_id":"s-0123456789"}',
    "props.title": '{"type":"pageview","path":"/a","props":{"title":"x\\ud83d"},'
    '"visitor_id":"v_0123456789abcdef","session_id":"s-0123456789"}',
    "props": '{"type":"pageview","path":"/a","props":{"k\\udc00":"x"},'
    '"visitor_id":"v_0123456789abcdef","session_id":"s-0123456789"}',
    "href": '{"type":"link click","path":"/a","href":"https://l.example/\\udc00",'
    '"visitor_id":"v_0123456789abcdef","session_id":"s-0123456789"}',
}


@pytest.mark.parametrize("field", sorted(SURROGATE_BODIES))
def test_a_lone_surrogate_is_refused_naming_its_field(
    client: Any, service: Any, field: str
) -> None:
    result = post_text(client, SURROGATE_BODIES[field])
    assert_refused(result, service, field)
    assert "Unicode" in result.json["message"]


def test_the_refusal_names_no_client_text(client: Any, service: Any) -> None:
    body = json.dumps(pageview(props={"reader@example.com": "x\ud800"}))
    result = post_text(client, body)
    assert_refused(result, service, "props")
    assert "@" not in result.text


def test_a_surrogate_pair_is_valid_unicode(client: Any, service: Any) -> None:
    body = json.dumps(pageview(props={"title": "\U0001f600"}))  # escaped as a pair
    assert "\\ud83d\\ude00" in body
    assert post_text(client, body).status_code == 204
    assert stored(service)[0].props == {"title": "\U0001f600"}


# -- nesting -----------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 50, 1900])
def test_nesting_deeper_than_the_bound_is_refused(client: Any, service: Any, depth: int) -> None:
    nested = "[" * (depth - 2) + "]" * (depth - 2)
    body = json.dumps(pageview())[:-1] + f',"props":{{"x":{nested}}}}}'
    assert len(body.encode()) <= MAX_BODY_BYTES and nesting_depth(body) == depth
    assert_refused(post_text(client, body), service, "body")


def test_nesting_inside_strings_does_not_count(client: Any, service: Any) -> None:
    body = json.dumps(pageview(props={"title": '[[[[{{{{ \\" ]]'}))
    assert nesting_depth(body) == 2
    assert post_text(client, body).status_code == 204


def test_a_nested_prop_within_the_bound_is_refused_naming_it(client: Any, service: Any) -> None:
    result = post_text(client, json.dumps(pageview(props={"deep": [1]})))
    assert_refused(result, service, "props.deep")


# -- size --------------------------------------------------------------------------------------


def test_an_oversize_body_is_refused_with_413(client: Any, service: Any) -> None:
    body = json.dumps(pageview(props={"pad": "x" * 100}))
    body = body[:-1] + " " * (MAX_BODY_BYTES + 1 - len(body)) + "}"
    assert len(body) == MAX_BODY_BYTES + 1
    result = post_text(client, body)
    assert result.status_code == 413
    assert result.json["error"] == "invalid_request"
    assert stored(service) == []


# -- action-link tokens ------------------------------------------------------------------------

TOKEN = "tok_AbCdEfGhIjKlMnOp-q_r"


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        (f"/unsubscribe/{TOKEN}", "/unsubscribe/redacted"),
        (f"/newsletter/unsubscribe/{TOKEN}", "/newsletter/unsubscribe/redacted"),
        (f"/news/letters/confirm/{TOKEN}/", "/news/letters/confirm/redacted/"),
        (f"/newsletter/profile/{TOKEN}/edit?x=1", "/newsletter/profile/redacted/edit"),
        (f"https://other.example/x/profile/{TOKEN}?a=b", "/x/profile/redacted"),
    ],
)
def test_action_link_tokens_are_stripped_from_the_path(
    client: Any, service: Any, sent: str, kept: str
) -> None:
    assert post_text(client, json.dumps(pageview(path=sent))).status_code == 204
    assert stored(service)[0].path == kept


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        (f"https://news.example.test/newsletter/confirm/{TOKEN}", "/newsletter/confirm/redacted"),
        (f"https://other.example/x/profile/{TOKEN}?a=b", "/x/profile/redacted"),
        (f"http://mail.example:8080/unsubscribe/{TOKEN}#top", "/unsubscribe/redacted"),
    ],
)
def test_action_link_tokens_are_stripped_from_referrer_and_href(
    client: Any, service: Any, sent: str, kept: str
) -> None:
    body = {**pageview(referrer=sent), "type": "link click", "href": sent}
    result = post_text(client, json.dumps(body))
    assert result.status_code == 204
    (event,) = stored(service)
    assert event.referrer.endswith(kept) and TOKEN not in event.referrer
    assert event.props["href"].endswith(kept) and TOKEN not in event.props["href"]


def test_action_link_tokens_are_stripped_from_href_like_props(client: Any, service: Any) -> None:
    props = {
        "link": f"https://other.example/x/profile/{TOKEN}?a=b",
        "target": f"/newsletter/unsubscribe/{TOKEN}",
        "plain": "/newsletter/archive/2026",
    }
    assert post_text(client, json.dumps(pageview(props=props))).status_code == 204
    assert stored(service)[0].props == {
        "link": "https://other.example/x/profile/redacted?a=b",
        "target": "/newsletter/unsubscribe/redacted",
        "plain": "/newsletter/archive/2026",
    }


# -- phone-like numbers and ids ----------------------------------------------------------------


def test_phone_like_numeric_props_are_dropped_as_phone_like_strings_are(
    client: Any, service: Any
) -> None:
    props = {
        "as_text": "4155551234",
        "as_int": 4155551234,
        "negative": -4155551234,
        "as_float": 4155551234.0,
        "intl": 441632960961,
        "count": 42,
        "year": 2026,
        "id_like": 123456789,
        "ratio": 0.4155551234,
        "measure": 4155.551234,
    }
    assert post_text(client, json.dumps(pageview(props=props))).status_code == 204
    assert stored(service)[0].props == {
        "count": 42,
        "year": 2026,
        "id_like": 123456789,
        "ratio": 0.4155551234,
        "measure": 4155.551234,
    }


@pytest.mark.parametrize("field", ["visitor_id", "session_id"])
@pytest.mark.parametrize(
    "value", ["4155551234", "415-555-1234", "0044_1632_960961", "1632-960961", "+14155551234"]
)
def test_a_phone_like_id_is_refused_naming_the_field(
    client: Any, service: Any, field: str, value: str
) -> None:
    assert_refused(post_text(client, json.dumps(pageview(**{field: value}))), service, field)


@pytest.mark.parametrize("field", ["visitor_id", "session_id"])
@pytest.mark.parametrize("value", ["reader@example.com", "reader_at_example.com@x"])
def test_an_email_like_id_is_refused_naming_the_field(
    client: Any, service: Any, field: str, value: str
) -> None:
    assert_refused(post_text(client, json.dumps(pageview(**{field: value}))), service, field)


@pytest.mark.parametrize(
    "value",
    [
        "0123456789abcdef0123456789abcdef",
        "12345678-1234-4234-8234-123456789012",
        "12345678",
        "2026-11-23",
    ],
)
def test_random_ids_are_accepted(client: Any, service: Any, value: str) -> None:
    body = json.dumps(pageview(visitor_id=value, session_id=value))
    assert post_text(client, body).status_code == 204
    assert stored(service)[0].visitor_id == value
