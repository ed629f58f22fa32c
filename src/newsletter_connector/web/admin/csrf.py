"""CSRF protection of the admin forms.

A signed-in session's forms carry its own random token (stored with the session), compared in
constant time. A host admin (no session of ours) gets ``<issued-at>.<HMAC>`` over their name
and the issue time under the site secret, valid :data:`HOST_TOKEN_MAX_AGE` seconds. Either way
a ``Sec-Fetch-Site: cross-site`` or a foreign ``Origin`` is refused first (403).
"""

from __future__ import annotations

import hmac
import re
from datetime import timezone
from typing import Literal
from urllib.parse import urlsplit

import falcon

from ...service.context import ServiceContext
from ..pages.csrf import is_cross_site
from .gate import Admin

FIELD_NAME = "csrf_token"
HOST_TOKEN_MAX_AGE = 12 * 60 * 60
_PURPOSE = "admin-form-csrf"
_TOKEN_RE = re.compile(r"^([0-9]{1,12})\.([0-9a-f]{64})$")

Verdict = Literal["ok", "cross_site", "invalid"]


class AdminCsrf:
    """Issues and checks the admin forms' tokens."""

    def __init__(self, context: ServiceContext) -> None:
        self._context = context
        base = urlsplit(context.settings.public_base_url)
        self._origin = f"{base.scheme}://{base.netloc}".lower()

    def token(self, admin: Admin) -> str:
        """The token for a form shown to ``admin``."""
        if admin.session is not None:
            return admin.session.csrf_token
        issued_at = self._now()
        return f"{issued_at}.{self._mac(admin.name, issued_at)}"

    def check(self, req: falcon.Request, admin: Admin, submitted: str) -> Verdict:
        """Whether ``admin``'s form submission may be acted upon."""
        if is_cross_site(req, self._origin):
            return "cross_site"
        if admin.session is not None:
            expected = admin.session.csrf_token
            ok = bool(submitted) and hmac.compare_digest(submitted.encode(), expected.encode())
            return "ok" if ok else "invalid"
        match = _TOKEN_RE.match(submitted or "")
        if match is None:
            return "invalid"
        issued_at = int(match.group(1))
        if not 0 <= self._now() - issued_at <= HOST_TOKEN_MAX_AGE:
            return "invalid"
        ok = hmac.compare_digest(self._mac(admin.name, issued_at), match.group(2))
        return "ok" if ok else "invalid"

    def check_login(self, req: falcon.Request) -> bool:
        """Whether a login form post is same-site (it has no session yet to bind a token)."""
        return not is_cross_site(req, self._origin)

    def _now(self) -> int:
        return int(self._context.clock().replace(tzinfo=timezone.utc).timestamp())

    def _mac(self, name: str, issued_at: int) -> str:
        return self._context.keyed_hash(_PURPOSE, f"{name}\x00{issued_at}")
