"""Who may enter the admin area, for one request.

With a ``newsletter_admin_user`` host hook the host decides (its :class:`AdminUser`, or a
redirect to ``admin_login_url``, else a 403 page); otherwise the ``newsletter_admin`` session
cookie does (a signed-out visitor is sent to the login page). While neither a host hook nor an
admin user exists, every admin address is the app's unknown-path 404.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import falcon

from ...plugin_manager import has_host_admin
from ...service import NewsletterService
from ...service.admin_access import ActiveSession
from ..client_address import client_address
from ..rate_limit import CLIENT_KEY_PURPOSE
from .paths import LOGIN, ROOT

COOKIE_NAME = "newsletter_admin"


@dataclass(frozen=True)
class Admin:
    """The admin behind a request: ``name`` (the audit's actor), ``role`` (which pages it may
    use, :mod:`.roles`) and, for the built-in login, the ``session`` (whose CSRF token guards
    its forms)."""

    name: str
    role: str
    session: ActiveSession | None = field(default=None, repr=False)


class AdminGate:
    """Decides who a request is, and answers those who may not enter."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service
        self.settings = service.settings
        self.host_hook = has_host_admin(service.context.plugins)
        base = urlsplit(self.settings.public_base_url)
        self.cookie_path = (base.path.rstrip("/") or "") + ROOT
        self.secure = base.scheme == "https"

    def configured(self, req: falcon.Request) -> bool:
        """Whether the admin area is on for ``req``: a host hook, or at least one admin user.
        The store is asked once a request; the answer is kept on ``req.context``."""
        if self.host_hook:
            return True
        known: bool | None = getattr(req.context, "admin_configured", None)
        if known is None:
            known = req.context.admin_configured = self.service.admin_access.has_users()
        return known

    def require_configured(self, req: falcon.Request) -> None:
        """Raise the unknown-path 404 while the admin area is off."""
        if not self.configured(req):
            raise falcon.HTTPNotFound()

    def client_hash(self, req: falcon.Request) -> str:
        """The keyed hash of the request's client address (never the address)."""
        address = client_address(req, self.settings.trusted_proxies)
        return self.service.context.keyed_hash(CLIENT_KEY_PURPOSE, address)

    def session(self, req: falcon.Request) -> ActiveSession | None:
        """The built-in login's live session of this request, if any."""
        for token in req.get_cookie_values(COOKIE_NAME) or []:
            if 20 <= len(token) <= 100:
                session = self.service.admin_access.session(token)
                if session is not None:
                    return session
        return None

    def admin(self, req: falcon.Request) -> Admin:
        """The admin making ``req``; otherwise raises what a visitor gets instead: the 404
        while unconfigured, the host's sign-in redirect or 403, or a redirect to the login.
        The admin found is kept on ``req.context`` for the rest of the request (read by
        :func:`signed_in`). Only the door asks (:mod:`.door`)."""
        known: Admin | None = getattr(req.context, "admin", None)
        if known is None:
            known = req.context.admin = self._find_admin(req)
        return known

    def _find_admin(self, req: falcon.Request) -> Admin:
        if self.host_hook:
            user = self.service.context.plugins.hook.newsletter_admin_user(environ=req.env)
            if user is None:
                self._send_to_host_login()
            return Admin(name=str(user.name), role=user.role)
        self.require_configured(req)
        session = self.session(req)
        if session is None:
            raise falcon.HTTPSeeOther(self.settings.public_base_url + LOGIN)
        return Admin(name=session.username, role=session.role, session=session)

    def set_session_cookie(self, resp: falcon.Response, token: str) -> None:
        """Send the session cookie: HttpOnly, SameSite=Strict, Secure on https, admin path
        only; it lives as long as the browser (the server ends the session)."""
        resp.set_cookie(
            COOKIE_NAME,
            token,
            path=self.cookie_path,
            secure=self.secure,
            http_only=True,
            same_site="Strict",
        )

    def clear_session_cookie(self, resp: falcon.Response) -> None:
        resp.unset_cookie(COOKIE_NAME, path=self.cookie_path)

    def _send_to_host_login(self) -> None:
        target = self.settings.admin_login_url
        if target:
            raise falcon.HTTPSeeOther(target)
        raise HostSignInRequired()


def signed_in(req: falcon.Request) -> Admin:
    """The admin the door let in (:class:`~.door.AdminDoorMiddleware` asked
    :meth:`AdminGate.admin` before any admin resource ran): admin pages assume a signed-in
    admin and never decide who may enter.

    :raises RuntimeError: no door ran for ``req`` (a page mounted without it), never a visitor.
    """
    admin: Admin | None = getattr(req.context, "admin", None)
    if admin is None:
        raise RuntimeError(f"{req.path} reached without the admin door deciding who may enter")
    return admin


class HostSignInRequired(Exception):
    """A signed-out visitor while the host signs admins in and names no login page."""


class OutsideRole(Exception):
    """A signed-in ``admin`` asking for a page or act its role may not use (:mod:`.roles`);
    ``why`` tells them, in words."""

    def __init__(self, admin: Admin, why: str) -> None:
        super().__init__(f"{admin.role} may not use this page")
        self.admin = admin
        self.why = why
