"""The list-source surface (``/api/listsource``): our issues as listmonk campaigns, read-only.

One sink answers every request under the prefix, checking in order: the surface is off until
both credentials are set (404 for everything); credentials (``Basic`` or ``token user:key``,
else 401 with a challenge); method (GET and HEAD, else 405); route (else 404). Errors are
``{"message": ...}``.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import falcon

from ..service import NewsletterService
from .listsource_query import go_atoi, parse_campaign_query, parse_page, parse_per_page
from .listsource_wire import campaign_object, campaigns_envelope, list_object, page_envelope

CHALLENGE = 'Basic realm="listsource", charset="UTF-8"'
ALLOWED_METHODS = ("GET", "HEAD")
MAX_AUTHORIZATION_LENGTH = 2048
_CAMPAIGN_PATH = re.compile(r"/api/campaigns/([^/]+)")


def listsource_credentials(header: str | None) -> tuple[str, str] | None:
    """``(user, key)`` from an ``Authorization`` header in either accepted form (scheme in any
    case; split on the first ``:``), else ``None`` (also for an empty user or key)."""
    if not header or len(header) > MAX_AUTHORIZATION_LENGTH:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    scheme = scheme.lower()
    if scheme == "basic":
        try:
            value = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    elif scheme != "token":
        return None
    user, colon, key = value.partition(":")
    if not colon or not user or not key:
        return None
    return user, key


def _error(resp: falcon.Response, status: str, message: str) -> None:
    resp.status = status
    resp.media = {"message": message}


class ListSourceSink:
    """Falcon sink for every path under the list-source prefix."""

    def __init__(self, service: NewsletterService, prefix: str) -> None:
        self.service = service
        self.prefix = prefix

    def __call__(self, req: falcon.Request, resp: falcon.Response, **_: Any) -> None:
        if not self._authorised(req, resp):
            return
        if req.method not in ALLOWED_METHODS:
            resp.set_header("Allow", ", ".join(ALLOWED_METHODS))
            message = f"{req.method} is not allowed: the list-source surface is read-only"
            _error(resp, falcon.HTTP_405, message)
            return
        self._route(req, resp, req.path[len(self.prefix) :])

    def _authorised(self, req: falcon.Request, resp: falcon.Response) -> bool:
        admin = self.service.admin
        credentials = listsource_credentials(req.get_header("Authorization"))
        if credentials is None:
            verdict = False if admin.listsource_enabled() else None
        else:
            verdict = admin.verify_listsource_credentials(*credentials)
        if verdict is None:
            _error(resp, falcon.HTTP_404, "404 unknown endpoint")
            return False
        if not verdict:
            resp.set_header("WWW-Authenticate", CHALLENGE)
            message = (
                "invalid API credentials"
                if credentials
                else "missing or malformed credentials: send 'Authorization: Basic "
                "base64(user:key)' or 'Authorization: token user:key'"
            )
            _error(resp, falcon.HTTP_401, message)
            return False
        return True

    def _route(self, req: falcon.Request, resp: falcon.Response, path: str) -> None:
        listsource = self.service.listsource
        settings = self.service.settings
        if path == "/api/health":
            resp.media = {"data": True}
        elif path == "/api/campaigns":
            page = listsource.campaigns(parse_campaign_query(req.params))
            resp.media = campaigns_envelope(page, settings)
        elif match := _CAMPAIGN_PATH.fullmatch(path):
            campaign_id = go_atoi(match.group(1))
            # Not an integer: no campaign has that id (NotFound from the service otherwise).
            record = listsource.campaign(campaign_id if campaign_id is not None else 0)
            resp.media = {"data": campaign_object(record, settings)}
        elif path == "/api/lists":
            page_number, per_page = parse_page(req.params), parse_per_page(req.params)
            results = [list_object(listsource.the_list())] if page_number == 1 else []
            resp.media = page_envelope(results, total=1, per_page=per_page, page=page_number)
        else:
            _error(resp, falcon.HTTP_404, "404 unknown endpoint")


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService, prefix: str
) -> None:
    """Serve the list-source surface under ``prefix`` (and nothing that merely starts with
    the same letters, such as ``/api/listsourcex``)."""
    app.add_sink(ListSourceSink(service, prefix), re.compile(re.escape(prefix) + r"(?=/|\Z)"))
