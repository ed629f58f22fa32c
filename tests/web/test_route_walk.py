"""Malformed input is a 4xx, never a 5xx, on every route of the app.

The walk takes its routes from falcon's router (``route_walk.app_routes``), so a route added
later is walked too, and sends each, with the credentials its surface needs (API key, list-source
Basic credentials, export bearer token):

- every method the route's method map holds, on the real path and on malformed path segments
  (bad percent-encoding, invalid UTF-8, NUL, 3,000 characters);
- GET with a malformed value in every query parameter any surface reads (``--5``, ``1e3``,
  Arabic-Indic digits, ``+5``, 5,000 digits, repeated, empty ...);
- GET with malformed ``Authorization`` headers (each surface's schemes, empty, 5,000 characters,
  bad base64, non-UTF-8 credentials);
- POST, PUT, PATCH and DELETE with malformed bodies: 100,000 ``[``, nesting just under and over
  the parser's depth, invalid UTF-8, ``NaN``, oversize, wrong content types, and multipart and
  form bodies sent chunked (no ``Content-Length``), and ``Content-Length`` values that are not a
  length (``abc``, ``-1``, twenty digits, longer than the body).

Then targeted tests pin the cases that were 500s: every strict integer parameter with ``--5`` and
its kin, a chunked multipart POST to the one-click unsubscribe page (411; the same request with a
length still unsubscribes), deep JSON to the analytics capture endpoint.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from newsletter_connector import create_app
from newsletter_connector.web.paths import surface_of
from tests.support.analytics_helpers import connect, pageview
from tests.support.listsource_fixtures import insert_issue
from tests.support.route_walk import Route, app_routes, call, sink_paths

EMAIL = "walker@example.org"
LISTSOURCE_USER, LISTSOURCE_KEY = "platform", "listsource-key-0123456789"

BAD_VALUES = (
    "--5",
    "--1",
    "-5",
    "1e3",
    "%D9%A3",  # ARABIC-INDIC DIGIT THREE
    "%EF%BC%95",  # FULLWIDTH DIGIT FIVE
    "%2B5",
    "%205",
    "1_000",
    "0x10",
    "9" * 30,
    "9" * 5000,
    "",
    "5%00",
    "%FF",
    "all",
    base64.urlsafe_b64encode(b"[" * 140).decode(),
)
#: Every query parameter a surface reads (Newsletter API, list-source, export).
QUERY_NAMES = (
    "limit",
    "after_id",
    "page",
    "per_page",
    "cursor",
    "status",
    "include",
    "from",
    "to",
    "order",
)
BAD_SEGMENTS = ("%ZZ", "%C0%AF", "%00", "%FF%FE", "x" * 3000, "a%2Fb", "..", "--1")
MULTIPART = (
    b'--xyz\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\n'
    b"One-Click\r\n--xyz--\r\n"
)
#: (content type, body, sent chunked: without Content-Length)
BAD_BODIES: tuple[tuple[str, bytes, bool], ...] = (
    ("application/json", b"[" * 100_000, False),
    ("application/json", b"[" * 4_000, False),
    ("text/plain", b"[" * 3_000, False),
    ("application/json", b'{"first_name": ' + b"[" * 900 + b"]" * 900 + b"}", False),
    ("application/json", b'{"props": {"a": ' + b"[" * 900 + b"]" * 900 + b"}}", False),
    ("application/json", b'{"prefs": ' + b'{"email": ' * 400 + b"1" + b"}" * 401, False),
    ("application/json", b"\xff\xfe{}", False),
    ("application/json", b'{"email": NaN}', False),
    ("application/json", b"{" + b" " * 200_000 + b"}", False),
    ("application/json", b'{"email": "a@example.org"}', True),
    ("text/xml", b"<a/>", False),
    ("multipart/form-data", b"--x--", False),
    ("multipart/form-data; boundary=xyz", MULTIPART, False),
    ("multipart/form-data; boundary=xyz", MULTIPART, True),
    ("multipart/form-data; boundary=", MULTIPART, True),
    ("application/x-www-form-urlencoded", b"a=%ZZ&b=%FF&c=\xff", False),
    ("application/x-www-form-urlencoded", b"List-Unsubscribe=One-Click", True),
)
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")
BAD_LENGTHS = ("abc", "-1", "99999999999999999999", "10")
#: Authorization headers that are malformed for every scheme the surfaces read.
BAD_CREDENTIALS = (
    "",
    "Bearer",
    "Bearer " + "x" * 5000,
    "Basic !!!",
    "Basic " + "QQ==" * 1000,
    "Basic /w==",  # base64 of a byte that is not UTF-8
    "token :",
    "token a:",
    "nlk_only-a-key",
    "Bearer nlk_\u00e9t\u00e9",
)


@pytest.fixture
def walk(newsletter_service: Any) -> Iterator[dict[str, Any]]:
    """An app with something behind every surface: a subscriber, an issue (a campaign), an
    analytics event, list-source credentials and an export connection."""
    service = newsletter_service
    service.admin.set_listsource_credentials(LISTSOURCE_USER, LISTSOURCE_KEY)
    basic = base64.b64encode(f"{LISTSOURCE_USER}:{LISTSOURCE_KEY}".encode()).decode()
    insert_issue(service.storage, created_at=service.context.clock().replace(microsecond=0))
    pageview(service)
    yield {
        "app": create_app(service=service),
        "service": service,
        "auth": {
            "newsletter": {"Authorization": f"Bearer {service.admin.create_api_key('w').key}"},
            "listsource": {"Authorization": f"Basic {basic}"},
            "export": connect(service),
        },
    }


def _resubscribe(service: Any) -> Any:
    """The walked subscriber, signed up again if a DELETE erased it."""
    service.subscribers.subscribe({"email": EMAIL, "phone": "+44 20 7946 0000"})
    return service.subscribers.get(EMAIL)


def _real_value(template: str, field: str, record: Any) -> str:
    """A value for ``{field}`` that names something that exists."""
    if field.startswith("email"):
        return quote(EMAIL)
    kind = template.strip("/").split("/")[0]
    return str(getattr(record, f"{kind}_token", "no-such-token"))


def _paths(app: Any, route: Route, record: Any) -> tuple[list[str], list[str]]:
    """(paths naming something real, paths with a malformed segment) for ``route``."""
    if route.sink:
        return sink_paths(app, route.template), []
    head, brace, rest = route.template.partition("{")
    if not brace:
        return [route.template], []
    field, _, tail = rest.partition("}")
    real = head + _real_value(route.template, field, record) + tail
    return [real], [head + segment + tail for segment in BAD_SEGMENTS]


def _walk(walk: dict[str, Any]) -> tuple[list[str], int]:
    app, service, auth = walk["app"], walk["service"], walk["auth"]
    server_errors: list[str] = []
    sent = 0

    def send(method: str, path: str, **kw: Any) -> None:
        nonlocal sent
        headers = {**auth.get(surface_of(path), {}), **kw.pop("headers", {})}
        answer = call(app, method, path, headers=headers, **kw)
        sent += 1
        if answer.status >= 500:
            shown = {k: (v[:60] if isinstance(v, str | bytes) else v) for k, v in kw.items()}
            server_errors.append(f"{answer.status} {method} {path[:80]} {shown}")

    for route in app_routes(app):
        record = _resubscribe(service)
        real, malformed = _paths(app, route, record)
        # DELETE last: it erases the walked subscriber.
        methods = sorted(route.methods, key=lambda method: method == "DELETE")
        for method in methods:
            for path in real + malformed:
                send(method, path)
        for path in real:
            for credentials in BAD_CREDENTIALS:
                send("GET", path, headers={"Authorization": credentials})
            for name in QUERY_NAMES:
                for value in BAD_VALUES:
                    send("GET", path, query=f"{name}={value}")
                send("GET", path, query=f"{name}=1&{name}=2")
            send("GET", path, query="%ZZ=1&limit=%FF")
        for method in sorted(BODY_METHODS, key=lambda m: m == "DELETE"):
            if method not in route.methods:
                continue
            record = _resubscribe(service)
            for path in _paths(app, route, record)[0]:
                for content_type, body, chunked in BAD_BODIES:
                    headers = {"Content-Type": content_type}
                    if chunked:
                        headers["Transfer-Encoding"] = "chunked"
                    send(method, path, headers=headers, body=body, content_length=not chunked)
                for length in BAD_LENGTHS:
                    headers = {"Content-Type": "application/json"}
                    send(method, path, headers=headers, body=b"{}", content_length=length)
    return server_errors, sent


@pytest.mark.system  # thousands of requests, about 30 s
def test_every_route_answers_malformed_input_without_a_5xx(walk: dict[str, Any]) -> None:
    routes = app_routes(walk["app"])
    templates = {route.template for route in routes}
    # The router really was read: the surfaces and the pages are all there.
    assert {"/api/newsletter/v1/subscribers/{email:path}", "/api/export", "/api/listsource"} <= (
        templates
    )
    assert any(template.startswith("/unsubscribe/") for template in templates)
    server_errors, sent = _walk(walk)
    assert server_errors == []
    assert sent > 5_000


# -- the cases that were 500s, each pinned ----------------------------------------------------

INTEGER_PARAMS = (
    ("/api/newsletter/v1/subscribers", "limit"),
    ("/api/newsletter/v1/contact-messages", "limit"),
    ("/api/newsletter/v1/issues", "limit"),
    ("/api/export/events", "limit"),
    ("/api/export/events", "after_id"),
)
NOT_INTEGERS = ("--5", "--1", "1e3", "%D9%A3", "%2B5", "%205", "1_000", "9" * 5000, "", "5%00")
MULTIPART_TYPE = "multipart/form-data; boundary=xyz"


@pytest.mark.parametrize(("path", "name"), INTEGER_PARAMS)
def test_every_strict_integer_parameter_refuses_what_is_not_ascii_digits(
    walk: dict[str, Any], path: str, name: str
) -> None:
    answers = {
        value: call(
            walk["app"],
            "GET",
            path,
            query=f"{name}={value}",
            headers=walk["auth"][surface_of(path)],
        )
        for value in NOT_INTEGERS
    }
    expected = f"query parameter {name} must be an integer".encode()
    wrong = {
        value[:20]: (answer.status, answer.body[:80])
        for value, answer in answers.items()
        if answer.status != 400 or expected not in answer.body
    }
    assert wrong == {}


@pytest.mark.parametrize("content_type", [MULTIPART_TYPE, "multipart/form-data"])
def test_a_chunked_multipart_one_click_unsubscribe_is_411_and_changes_nothing(
    walk: dict[str, Any], content_type: str
) -> None:
    record = _resubscribe(walk["service"])
    answer = call(
        walk["app"],
        "POST",
        f"/unsubscribe/{record.unsubscribe_token}",
        headers={"Content-Type": content_type, "Transfer-Encoding": "chunked"},
        body=MULTIPART,
        content_length=False,
    )
    assert answer.status == 411
    assert answer.headers["content-type"].startswith("text/html")
    assert walk["service"].subscribers.get(EMAIL).status == record.status
    # The same one-click request with its length is honoured.
    answer = call(
        walk["app"],
        "POST",
        f"/unsubscribe/{record.unsubscribe_token}",
        headers={"Content-Type": MULTIPART_TYPE},
        body=MULTIPART,
    )
    assert answer.status == 200
    assert walk["service"].subscribers.get(EMAIL).status == "unsubscribed"


@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_deep_json_to_the_analytics_capture_is_a_400(
    walk: dict[str, Any], content_type: str
) -> None:
    answer = call(
        walk["app"],
        "POST",
        "/analytics/collect",
        headers={"Content-Type": content_type},
        body=b"[" * 3_000,
    )
    assert answer.status == 400
    assert b"invalid_request" in answer.body


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_a_chunked_json_body_is_a_400_saying_so_not_an_empty_body(
    walk: dict[str, Any], method: str
) -> None:
    before = walk["service"].subscribers.contact(_resubscribe(walk["service"]))
    path = "/api/newsletter/v1/subscribers" + ("" if method == "POST" else f"/{quote(EMAIL)}")
    answer = call(
        walk["app"],
        method,
        path,
        headers={
            "Content-Type": "application/json",
            "Transfer-Encoding": "chunked",
            **walk["auth"]["newsletter"],
        },
        body=b'{"email": "other@example.org", "zip": "54321"}',
        content_length=False,
    )
    assert answer.status == 400
    assert json.loads(answer.body) == {
        "error": "invalid_request",
        "message": "body must be sent with a Content-Length, not chunked",
    }
    assert walk["service"].subscribers.contact(walk["service"].subscribers.get(EMAIL)) == before
