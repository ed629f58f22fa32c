"""Public analytics capture: ``POST /analytics/collect`` and ``GET /analytics.js`` (under base_url).

The collect endpoint takes one event as a JSON object, sent as ``application/json`` or as
``text/plain`` (what ``navigator.sendBeacon`` sends for a string, so no CORS preflight is
needed). Fields: ``type``, ``visitor_id``, ``session_id``, ``path``, optional ``referrer``,
``href`` (link click), ``seconds`` (engagement ping), ``props``. It answers ``204`` when
recorded; a bad body answers ``400 {error: "invalid_request", message}`` naming the field,
``413`` over 4 KiB and ``415`` for other media types; over the client's rate limit
(``rate_limit_analytics``) it answers ``429 {error: "rate_limited"}`` with ``Retry-After``.
Sanitising happens in the service.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import falcon

from ..errors import InvalidRequest
from ..service import NewsletterService
from .bodies import decode_json
from .rate_limit import PublicRateLimits

COLLECT_PATH = "/analytics/collect"
SCRIPT_PATH = "/analytics.js"
MAX_BODY_BYTES = 4096
FIELDS = ("type", "visitor_id", "session_id", "path", "referrer", "href", "seconds", "props")
ACCEPTED_MEDIA = ("application/json", "text/plain")


def _json_error(resp: falcon.Response, status: str, code: str, message: str) -> None:
    resp.status = status
    resp.media = {"error": code, "message": message}


def parse_body(raw: bytes) -> dict[str, Any]:
    """The event object of a collect request.

    :raises InvalidRequest: not UTF-8 JSON, not an object, or an unknown field.
    """
    try:
        data = decode_json(raw)
    except ValueError:
        raise InvalidRequest("body must be a JSON object", field="body") from None
    if not isinstance(data, dict):
        raise InvalidRequest("body must be a JSON object", field="body")
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
            _json_error(
                resp,
                falcon.HTTP_415,
                "invalid_request",
                "send the event as application/json or text/plain",
            )
            return
        if req.content_length is not None and req.content_length > MAX_BODY_BYTES:
            _json_error(resp, falcon.HTTP_413, "invalid_request", "body is too large")
            return
        raw = req.bounded_stream.read(MAX_BODY_BYTES + 1)
        if len(raw) > MAX_BODY_BYTES:
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


class ScriptResource:
    """The capture script; cached for an hour by browsers."""

    def __init__(self) -> None:
        self.body = (
            resources.files("newsletter_connector.web").joinpath("static/analytics.js").read_bytes()
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/javascript; charset=utf-8"
        resp.cache_control = ["public", "max-age=3600"]
        resp.data = self.body


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService
) -> None:
    app.add_route(COLLECT_PATH, CollectResource(service))
    app.add_route(SCRIPT_PATH, ScriptResource())
