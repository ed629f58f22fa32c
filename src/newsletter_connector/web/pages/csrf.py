"""CSRF protection for the reader forms: a signed double-submit token, no server session.

The cookie ``newsletter_csrf`` holds a random nonce (``HttpOnly``, ``SameSite=Lax``); the form's
``csrf_token`` is ``<issued-at>.<HMAC of nonce and issued-at under the site secret>``, compared in
constant time and valid for :data:`MAX_AGE_SECONDS`. A ``Sec-Fetch-Site: cross-site`` or an
``Origin`` other than ``base_url``'s (``null`` aside) is refused first. RFC 8058 one-click is the
one exemption (:mod:`.unsubscribe`). See docs/contributing/decisions/reader-pages.md, "Reader
pages".
"""

from __future__ import annotations

import hmac
import re
import secrets
from datetime import timezone
from typing import Literal
from urllib.parse import urlsplit

import falcon

from ...service.context import ServiceContext

COOKIE_NAME = "newsletter_csrf"
FIELD_NAME = "csrf_token"
#: How long a shown form stays valid: a reader may leave it open for a long while.
MAX_AGE_SECONDS = 24 * 60 * 60
_PURPOSE = "reader-form-csrf"
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{32,64}$")
_TOKEN_RE = re.compile(r"^([0-9]{1,12})\.([0-9a-f]{64})$")

#: ``cross_site``: refuse (403); ``invalid``: missing, forged or expired token (form again, 400).
Verdict = Literal["ok", "cross_site", "invalid"]


def is_cross_site(req: falcon.Request, own_origin: str) -> bool:
    """Whether ``req`` says it comes from another site: ``Sec-Fetch-Site: cross-site``, or an
    ``Origin`` other than ``own_origin`` (lowercase ``scheme://host[:port]``; ``null`` aside)."""
    if (req.get_header("Sec-Fetch-Site") or "").strip().lower() == "cross-site":
        return True
    origin = (req.get_header("Origin") or "").strip().lower()
    return bool(origin) and origin != "null" and origin != own_origin


class CsrfGuard:
    """Issues and checks form tokens for one app."""

    def __init__(self, context: ServiceContext) -> None:
        self._context = context
        base = urlsplit(context.settings.public_base_url)
        self._origin = f"{base.scheme}://{base.netloc}".lower()
        self._cookie_path = base.path or "/"
        self._secure = base.scheme == "https"

    def _now(self) -> int:
        return int(self._context.clock().replace(tzinfo=timezone.utc).timestamp())

    def _mac(self, nonce: str, issued_at: int) -> str:
        return self._context.keyed_hash(_PURPOSE, f"{nonce}\x00{issued_at}")

    def issue(self, req: falcon.Request, resp: falcon.Response) -> str:
        """A token for a form about to be shown; sets the nonce cookie when needed."""
        nonce = self._cookie_nonce(req)  # reused, so forms open in several tabs stay valid
        if nonce is None:
            nonce = secrets.token_urlsafe(32)
        # Always (re)send the cookie, so its lifetime follows the newest form shown.
        resp.set_cookie(
            COOKIE_NAME,
            nonce,
            max_age=MAX_AGE_SECONDS,
            path=self._cookie_path,
            secure=self._secure,
            http_only=True,
            same_site="Lax",
        )
        issued_at = self._now()
        return f"{issued_at}.{self._mac(nonce, issued_at)}"

    def check(self, req: falcon.Request, submitted: str) -> Verdict:
        """Whether a form submission may be acted upon (see the module docstring)."""
        if self._cross_site(req):
            return "cross_site"
        nonce = self._cookie_nonce(req)
        match = _TOKEN_RE.match(submitted or "")
        if nonce is None or match is None:
            return "invalid"
        issued_at = int(match.group(1))
        age = self._now() - issued_at
        if not 0 <= age <= MAX_AGE_SECONDS:
            return "invalid"
        if not hmac.compare_digest(self._mac(nonce, issued_at), match.group(2)):
            return "invalid"
        return "ok"

    def _cross_site(self, req: falcon.Request) -> bool:
        return is_cross_site(req, self._origin)

    @staticmethod
    def _cookie_nonce(req: falcon.Request) -> str | None:
        for value in req.get_cookie_values(COOKIE_NAME) or []:
            if _NONCE_RE.match(value):
                return value
        return None
