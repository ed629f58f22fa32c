"""``/admin/login`` and ``/admin/logout``: the built-in login (absent when a host hook signs
admins in: then both are the host's answer, like every admin address). The door
(:mod:`.door`) lets visitors reach the login page; the page itself decides nothing about them."""

from __future__ import annotations

import falcon

from ...errors import Unauthorized
from ...service.admin_access import WRONG_CREDENTIALS, LoginThrottled
from ..pages.csrf import FIELD_NAME as LOGIN_CSRF_FIELD
from ..pages.csrf import CsrfGuard
from ..pages.forms import read_form
from .act import ActCall, Done
from .base import AdminPages
from .input import check_fields
from .paths import HOME, LOGIN


class LoginPage:
    """GET shows the form; POST signs in (a fresh session, then the dashboard)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages
        # The login form has no session yet: the reader pages' signed double-submit token.
        self.login_csrf = CsrfGuard(pages.service.context)

    def _built_in_only(self, req: falcon.Request) -> None:
        if self.pages.gate.host_hook:  # the door let only a signed-in host admin in
            raise falcon.HTTPSeeOther(self.pages.url(HOME))

    def _form(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        *,
        status: str = falcon.HTTP_200,
        error: str | None = None,
        username: str = "",
    ) -> None:
        self.pages.renderer.render(
            resp,
            "login.html",
            status=status,
            csrf_token=self.login_csrf.issue(req, resp),
            error=error,
            username=username,
            action_url=self.pages.url(LOGIN),
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._built_in_only(req)
        if self.pages.gate.session(req) is not None:
            self.pages.redirect(resp, HOME)
            return
        self._form(req, resp)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._built_in_only(req)
        form = read_form(req)
        verdict = self.login_csrf.check(req, form.get(LOGIN_CSRF_FIELD))
        if verdict != "ok":
            self.pages.refuse(resp)
            return
        check_fields(form.fields)  # before the store is asked about the username
        username = form.get("username").strip()[:100]
        try:
            session = self.pages.service.admin_access.login(
                username, form.get("password"), client_hash=self.pages.gate.client_hash(req)
            )
        except LoginThrottled as throttled:
            self._form(
                req,
                resp,
                status=falcon.HTTP_429,
                error=f"Too many failed sign-ins. Try again in {_minutes(throttled.retry_after)}.",
                username=username,
            )
            resp.set_header("Retry-After", str(throttled.retry_after))
            return
        except Unauthorized:
            self._form(
                req, resp, status=falcon.HTTP_401, error=WRONG_CREDENTIALS, username=username
            )
            return
        self.pages.gate.set_session_cookie(resp, session.token)
        self.pages.redirect(resp, HOME)


def sign_out(call: ActCall) -> Done:
    """End the session (its row deleted; the access service records ``logout``) and go to the
    login page; a host admin signs out at the host, so is only sent home."""
    session = call.admin.session
    if session is None:
        return Done(None, redirect_to=HOME)
    call.service.admin_access.logout(session, client_hash=call.pages.gate.client_hash(call.req))
    call.pages.gate.clear_session_cookie(call.resp)
    return Done(None)


def _minutes(seconds: int) -> str:
    minutes = max(1, -(-seconds // 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"
