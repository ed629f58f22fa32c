"""Newsletter API v1 resources (``/api/newsletter/v1``)."""

from __future__ import annotations

import falcon

from ..service import NewsletterService
from .auth import require_api_key

API_VERSION = "v1"


@falcon.before(require_api_key)
class StatusResource:
    """``GET /status``: ``{ok: true, version: "v1", key: <label>}``. Reads nothing but the
    presented key's own record (the authentication every request makes)."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True, "version": API_VERSION, "key": req.context.api_key.label}


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService, prefix: str
) -> None:
    app.add_route(f"{prefix}/status", StatusResource(service))
