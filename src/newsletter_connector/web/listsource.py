"""The list-source surface (``/api/listsource``): our issues as listmonk campaigns, read-only.

One sink answers every request under the prefix, checking in this order:

1. **off**: until both list-source credentials are set, every request (any path, any method)
   is 404, so the surface is indistinguishable from a missing one;
2. **credentials**: ``Authorization: Basic base64(user:key)`` or ``Authorization: token
   user:key``; anything else is 401 with a ``WWW-Authenticate`` challenge;
3. **method**: only GET and HEAD (GET without a body) are served; any other method is 405
   with ``Allow: GET, HEAD``, on every path;
4. **route**: ``/api/health``, ``/api/campaigns``, ``/api/campaigns/{id}``, ``/api/lists``;
   any other path is 404.

Errors are ``{"message": ...}`` (``web/errors.py`` renders the listsource shape).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import falcon

from ..service import NewsletterService
from .errors import render_error
from .listsource_query import go_atoi, parse_campaign_query, parse_page, parse_per_page
from .listsource_wire import campaign_object, campaigns_envelope, list_object, page_envelope

CHALLENGE = 'Basic realm="listsource", charset="UTF-8"'
ALLOWED_METHODS = ("GET", "HEAD")
MAX_AUTHORIZATION_LENGTH = 2048
_CAMPAIGN_PATH = re.compile(r"/api/campaigns/([^/]+)")


def listsource_credentials(header: str | None) -> tuple[str, str] | None:
    """``(user, key)`` from an ``Authorization`` header in either accepted form, else ``None``.

    Schemes are matched case-insensitively (RFC 7235); both forms split on the first ``:``
    so a key may contain ``:``. Empty user or key, bad base64 or non-UTF-8 is ``None``.
    """
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
            render_error(
                req,
                resp,
                falcon.HTTP_405,
                "method_not_allowed",
                f"{req.method} is not allowed: the list-source surface is read-only",
            )
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
            render_error(req, resp, falcon.HTTP_404, "not_found", "404 unknown endpoint")
            return False
        if not verdict:
            resp.set_header("WWW-Authenticate", CHALLENGE)
            message = (
                "invalid API credentials"
                if credentials
                else "missing or malformed credentials: send 'Authorization: Basic "
                "base64(user:key)' or 'Authorization: token user:key'"
            )
            render_error(req, resp, falcon.HTTP_401, "unauthorized", message)
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
            resp.media = page_envelope(
                results,
                total=1,
                per_page=per_page,
                page=page_number,
            )
        else:
            render_error(req, resp, falcon.HTTP_404, "not_found", "404 unknown endpoint")


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService, prefix: str
) -> None:
    """Serve the list-source surface under ``prefix`` (and nothing that merely starts with
    the same letters, such as ``/api/listsourcex``)."""
    app.add_sink(ListSourceSink(service, prefix), re.compile(re.escape(prefix) + r"(?=/|\Z)"))
