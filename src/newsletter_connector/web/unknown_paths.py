"""The app's answer to a path no route or sink serves: the unknown-path 404, after the same
work the export sink does before its own 404.

The export sink answers a request without the active connection's token with that very 404
(docs/contributing/decisions/foundation.md, "The export 404 is the site's 404 page"), but to know
the token is wrong it reads the connection. Without this sink a request carrying a bearer token got
the 404 sooner from an unknown path than from an export path, telling the two apart by timing; here
every unknown path with a bearer token checks it against the connection too, and discards the
answer.
"""

from __future__ import annotations

import re
from typing import Any

import falcon

from ..service import NewsletterService
from .auth import bearer_token


class UnknownPathSink:
    """Falcon sink for every path (``prefix`` ``""``), added before any other sink so that it
    is tried last: what no route and no other sink serves."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service
        self.prefix = ""
        self.pattern = re.compile("")

    def __call__(self, req: falcon.Request, resp: falcon.Response, **_: Any) -> None:
        token = bearer_token(req)
        if token is not None:
            self.service.admin.verify_connection_token(token)  # as the export sink: same cost
        raise falcon.HTTPRouteNotFound()


def add_sink(app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService) -> None:
    """Answer ``app``'s unknown paths with :class:`UnknownPathSink`; call it before adding any
    other sink (falcon tries the sinks added last first)."""
    sink = UnknownPathSink(service)
    app.add_sink(sink, sink.pattern)
