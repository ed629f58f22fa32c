"""One-shot messages across a post/redirect/get: a cookie holding the message and its HMAC
under the site secret (so only this app's own words are ever shown), read once and cleared."""

from __future__ import annotations

import base64
import hmac

import falcon

from ...service.context import ServiceContext

COOKIE_NAME = "newsletter_admin_flash"
_PURPOSE = "admin-flash"


class Flash:
    """Sets and takes the flash message of one admin area."""

    def __init__(self, context: ServiceContext, *, path: str, secure: bool) -> None:
        self._context = context
        self._path = path
        self._secure = secure

    def set(self, resp: falcon.Response, message: str) -> None:
        encoded = base64.urlsafe_b64encode(message.encode()).decode().rstrip("=")
        value = f"{encoded}.{self._context.keyed_hash(_PURPOSE, encoded)}"
        resp.set_cookie(
            COOKIE_NAME,
            value,
            path=self._path,
            secure=self._secure,
            http_only=True,
            same_site="Strict",
            max_age=300,
        )

    def take(self, req: falcon.Request, resp: falcon.Response) -> str | None:
        """The message set by the previous response, if any (and clear it)."""
        values = req.get_cookie_values(COOKIE_NAME) or []
        if not values:
            return None
        resp.unset_cookie(COOKIE_NAME, path=self._path)
        encoded, _, mac = values[0].partition(".")
        if not hmac.compare_digest(self._context.keyed_hash(_PURPOSE, encoded), mac):
            return None
        try:
            return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
        except (ValueError, UnicodeDecodeError):
            return None
