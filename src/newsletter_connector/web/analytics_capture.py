"""Public analytics capture: ``POST /analytics/collect`` and ``GET /analytics.js`` (under base_url).

Collect takes one event as a JSON object, as ``application/json`` or ``text/plain`` (what
``sendBeacon`` sends, so no CORS preflight). It answers 204 when recorded; 400
``invalid_request`` naming the field for a bad body (text that is not valid Unicode, nesting
deeper than :data:`MAX_NESTING` included), 413 over :data:`MAX_BODY_BYTES`, 415 for other media
types, 429 ``rate_limited`` with ``Retry-After`` over the client's limit. A refused request
stores nothing; sanitising happens in the service.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import falcon

from ..errors import InvalidRequest
from ..model.wire_safe import has_lone_surrogate
from ..service import NewsletterService
from ..service.analytics_sanitize import PROP_KEY_PATTERN
from .bodies import decode_json, read_capped
from .rate_limit import PublicRateLimits

COLLECT_PATH = "/analytics/collect"
SCRIPT_PATH = "/analytics.js"
MAX_BODY_BYTES = 4096
FIELDS = ("type", "visitor_id", "session_id", "path", "referrer", "href", "seconds", "props")
ACCEPTED_MEDIA = ("application/json", "text/plain")
#: Deepest nesting of arrays and objects a body may have: the event object is level 1 and
#: ``props`` level 2; one level more lets a nested prop value be refused naming its prop.
MAX_NESTING = 3


def _json_error(resp: falcon.Response, status: str, code: str, message: str) -> None:
    resp.status = status
    resp.media = {"error": code, "message": message}


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in the JSON text ``text`` (brackets inside strings
    do not count), found without parsing so a deep text costs no recursion, in one pass: a
    string left open hides the rest of the text from the parser too."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _child_field(field: str, key: str) -> str:
    """The name errors give ``key`` inside ``field``: only names the service defines (a known
    field, a well-formed prop key), never arbitrary client text such as an address."""
    if field == "body":
        return key if key in FIELDS else "body"
    if field == "props" and PROP_KEY_PATTERN.fullmatch(key):
        return f"props.{key}"
    return field


def _lone_surrogate_field(value: Any, field: str) -> str | None:
    """The name of the first field of ``value`` (named ``field``) whose text, or a key in
    it, holds a lone surrogate; ``None`` when all text is valid Unicode."""
    if isinstance(value, str):
        return field if has_lone_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if has_lone_surrogate(key):
                return field
            found = _lone_surrogate_field(item, _child_field(field, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            found = _lone_surrogate_field(item, field)
            if found is not None:
                return found
    return None


def parse_body(raw: bytes) -> dict[str, Any]:
    """The event object of a collect request. :raises InvalidRequest: not a UTF-8 JSON object,
    nested deeper than :data:`MAX_NESTING`, text that is not valid Unicode (naming its field),
    or an unknown field."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidRequest("body must be a JSON object", field="body") from None
    if nesting_depth(text) > MAX_NESTING:
        raise InvalidRequest(
            f"body must not nest arrays or objects more than {MAX_NESTING} deep", field="body"
        )
    try:
        data = decode_json(raw)
    except ValueError:
        raise InvalidRequest("body must be a JSON object", field="body") from None
    if not isinstance(data, dict):
        raise InvalidRequest("body must be a JSON object", field="body")
    unicode_field = _lone_surrogate_field(data, "body")
    if unicode_field is not None:
        raise InvalidRequest(
            f"{unicode_field} must be valid Unicode text (no lone surrogate)", field=unicode_field
        )
    for name in data:
        if name not in FIELDS:
            shown = str(name)[:40]
            raise InvalidRequest(f"unknown field {shown!r}", field=shown)
    return data


class CollectResource:
    def __init__(self, service: NewsletterService) -> None:
        self.service = service
        self.rate_limits = PublicRateLimits(service.context)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        retry_after = self.rate_limits.retry_after(req, "analytics")
        if retry_after is not None:
            _json_error(resp, falcon.HTTP_429, "rate_limited", "too many events from this address")
            resp.set_header("Retry-After", str(retry_after))
            return
        media_type = (req.content_type or "text/plain").split(";", 1)[0].strip().lower()
        if media_type not in ACCEPTED_MEDIA:
            message = "send the event as application/json or text/plain"
            _json_error(resp, falcon.HTTP_415, "invalid_request", message)
            return
        raw = read_capped(req, MAX_BODY_BYTES)
        if raw is None:
            _json_error(resp, falcon.HTTP_413, "invalid_request", "body is too large")
            return
        try:
            data = parse_body(raw)
            self.service.analytics.record_event(
                data.get("type"),  # type: ignore[arg-type]
                visitor_id=data.get("visitor_id"),  # type: ignore[arg-type]
                session_id=data.get("session_id"),  # type: ignore[arg-type]
                path=data.get("path"),  # type: ignore[arg-type]
                referrer=data.get("referrer", ""),
                href=data.get("href"),
                seconds=data.get("seconds"),
                props=data.get("props"),
            )
        except InvalidRequest as exc:
            _json_error(resp, falcon.HTTP_400, exc.code, exc.message)
            return
        resp.status = falcon.HTTP_204
        resp.cache_control = ["no-store"]


#: The line of the script naming where its visitor id lives, as shipped (``persistent``).
VISITOR_STORAGE_LINE = b'var VISITOR_STORAGE = "localStorage";'
VISITOR_STORAGES = {"persistent": "localStorage", "session": "sessionStorage"}


def capture_script(visitor_id: str) -> bytes:
    """The capture script as served under the setting ``analytics_visitor_id``
    (``persistent`` or ``session``): the shipped script with its visitor-id storage named."""
    script = resources.files("newsletter_connector.web").joinpath("static/analytics.js")
    body = script.read_bytes()
    if body.count(VISITOR_STORAGE_LINE) != 1:  # the script and this module must change together
        raise RuntimeError("analytics.js lost its VISITOR_STORAGE line")
    storage = VISITOR_STORAGES[visitor_id].encode()
    return body.replace(VISITOR_STORAGE_LINE, b'var VISITOR_STORAGE = "' + storage + b'";')


class ScriptResource:
    """The capture script; cached for an hour by browsers."""

    def __init__(self, service: NewsletterService) -> None:
        self.body = capture_script(service.settings.analytics_visitor_id)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/javascript; charset=utf-8"
        resp.cache_control = ["public", "max-age=3600"]
        resp.data = self.body


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService
) -> None:
    app.add_route(COLLECT_PATH, CollectResource(service))
    app.add_route(SCRIPT_PATH, ScriptResource(service))
