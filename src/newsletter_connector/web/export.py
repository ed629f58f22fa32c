"""Connector export endpoints (``/api/export``, docs/export.md), pulled by the platform, and the
feedback endpoint the platform posts bounces, complaints and unsubscribes to.

One sink serves the whole prefix so that authentication comes first: without the active connection's
bearer token every request gets the app's 404 for a missing path, byte for byte
(docs/contributing/decisions/foundation.md, "The export 404 is the site's 404 page"). Only an
authenticated caller learns of 405 or 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import falcon

from ..model.analytics import event_wire
from ..service import NewsletterService
from ..service.analytics import MAX_EVENTS_LIMIT
from .auth import bearer_token
from .bodies import json_body
from .params import date_param, int_param, reject_unknown_params

Endpoint = Callable[[falcon.Request, falcon.Response], None]
MAX_AFTER_ID = 2**63 - 1
DEFAULT_EVENTS_LIMIT = 500


#: A full feedback batch (100 items with 1000-character reasons) fits with room to spare.
MAX_FEEDBACK_BODY_BYTES = 512 * 1024


class ExportSink:
    """Dispatches ``{prefix}/status|events|rollups`` (GET) and ``{prefix}/feedback`` (POST)
    after checking the connection token."""

    def __init__(self, service: NewsletterService, prefix: str) -> None:
        self.service = service
        self.prefix = prefix
        self.pattern = re.compile(re.escape(prefix) + r"(?=/|$)")
        self.endpoints: dict[str, tuple[str, Endpoint]] = {
            "/status": ("GET", self.status),
            "/events": ("GET", self.events),
            "/rollups": ("GET", self.rollups),
            "/feedback": ("POST", self.feedback),
        }

    def __call__(self, req: falcon.Request, resp: falcon.Response, **_: Any) -> None:
        token = bearer_token(req)
        if token is None or not self.service.admin.verify_connection_token(token):
            raise falcon.HTTPNotFound()
        route = self.endpoints.get(req.path[len(self.prefix) :])
        if route is None:
            raise falcon.HTTPNotFound()
        method, endpoint = route
        if req.method != method:
            raise falcon.HTTPMethodNotAllowed([method])
        endpoint(req, resp)

    def status(self, req: falcon.Request, resp: falcon.Response) -> None:
        """``{ok: true}``: the token matches the active connection. No side effects."""
        reject_unknown_params(req, ())
        resp.media = {"ok": True}

    def events(self, req: falcon.Request, resp: falcon.Response) -> None:
        reject_unknown_params(req, ("after_id", "limit"))
        after_id = int_param(req, "after_id", default=0, minimum=0, maximum=MAX_AFTER_ID)
        limit = int_param(
            req, "limit", default=DEFAULT_EVENTS_LIMIT, minimum=1, maximum=MAX_EVENTS_LIMIT
        )
        page = self.service.analytics.events_page(after_id, limit)
        resp.media = {
            "events": [event_wire(event) for event in page.events],
            "next_after_id": page.next_after_id,
        }

    def rollups(self, req: falcon.Request, resp: falcon.Response) -> None:
        reject_unknown_params(req, ("from", "to"))
        from_date = date_param(req, "from")
        to_date = date_param(req, "to")
        resp.media = {"rollups": self.service.analytics.rollups(from_date, to_date)}

    def feedback(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Apply the platform's reports (:meth:`FeedbackService.apply`); ``{results: [{id,
        outcome}]}`` in the order sent. A 400 names the item and field; nothing is applied."""
        reject_unknown_params(req, ())
        body = json_body(req, "a JSON array of feedback items", MAX_FEEDBACK_BODY_BYTES)
        outcomes = self.service.feedback.apply(body)
        resp.media = {"results": [{"id": o.id, "outcome": o.outcome} for o in outcomes]}


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService, prefix: str
) -> None:
    """Serve the export endpoints under ``prefix`` (everything under it goes to the sink)."""
    sink = ExportSink(service, prefix)
    app.add_sink(sink, sink.pattern)
