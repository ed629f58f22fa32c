"""Cross-site request forgery protection for the reader forms.

A *signed double-submit token* (no server-side session):

- Showing a form sets the cookie ``newsletter_csrf`` to a random nonce (``HttpOnly``,
  ``SameSite=Lax``, ``Secure`` when ``base_url`` is https, scoped to the mount path), reusing
  the browser's nonce when it already has one so several open tabs keep working.
- The form carries the hidden field ``csrf_token`` = ``<issued-at>.<HMAC>`` where the HMAC is
  ``context.keyed_hash("reader-form-csrf", nonce + issued-at)`` under the site secret.
- A submission is accepted only when the cookie and the field are both present, the HMAC matches
  the cookie's nonce (constant-time), and the token is at most :data:`MAX_AGE_SECONDS` old.
- Before that, the browser's own provenance headers are checked: ``Sec-Fetch-Site: cross-site``
  or an ``Origin`` other than ``base_url``'s origin is refused outright (``Origin: null`` is not
  trusted; the token check decides it).

A cross-site page can neither read the cookie nor mint a token for the victim's nonce without the
site secret. The one exception, RFC 8058 one-click unsubscribe, is handled (and justified) in
:mod:`.unsubscribe`.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass
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

Verdict = Literal["ok", "cross_site", "invalid"]


@dataclass(frozen=True)
class CsrfCheck:
    """The outcome of :meth:`CsrfGuard.check`: ``ok``, ``cross_site`` (refuse, 403) or
    ``invalid`` (missing, forged or expired token: show the form again, 400)."""

    verdict: Verdict

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"


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
        nonce = self._cookie_nonce(req)
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

    def check(self, req: falcon.Request, submitted: str) -> CsrfCheck:
        """Whether a form submission may be acted upon (see the module docstring)."""
        if self._cross_site(req):
            return CsrfCheck("cross_site")
        nonce = self._cookie_nonce(req)
        match = _TOKEN_RE.match(submitted or "")
        if nonce is None or match is None:
            return CsrfCheck("invalid")
        issued_at = int(match.group(1))
        age = self._now() - issued_at
        if not 0 <= age <= MAX_AGE_SECONDS:
            return CsrfCheck("invalid")
        if not hmac.compare_digest(self._mac(nonce, issued_at), match.group(2)):
            return CsrfCheck("invalid")
        return CsrfCheck("ok")

    def _cross_site(self, req: falcon.Request) -> bool:
        if (req.get_header("Sec-Fetch-Site") or "").strip().lower() == "cross-site":
            return True
        origin = (req.get_header("Origin") or "").strip().lower()
        return bool(origin) and origin != "null" and origin != self._origin

    @staticmethod
    def _cookie_nonce(req: falcon.Request) -> str | None:
        values = req.get_cookie_values(COOKIE_NAME) or []
        for value in values:
            if _NONCE_RE.match(value):
                return value
        return None
