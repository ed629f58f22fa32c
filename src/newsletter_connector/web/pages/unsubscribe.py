"""``/unsubscribe/{token}``: the opt-out link, including RFC 8058 one-click.

- ``GET`` (and ``HEAD``) never change anything: link scanners fetch links in mail. It shows one
  "Unsubscribe" button, or says the reader is already unsubscribed.
- ``POST`` from that button (with its CSRF token) unsubscribes (``newsletter.unsubscribed`` is
  queued by the service) and confirms on screen. Repeating it is harmless.
- RFC 8058 one-click: a ``POST`` whose body is exactly ``List-Unsubscribe=One-Click``
  (url-encoded or multipart) unsubscribes and answers 200, with no redirect and no cookie.
  Mail providers send it from their servers, without our cookie or form token, so exactly that
  request is exempt from the CSRF check. That is safe because the authority to unsubscribe is
  the unguessable token in the URL, which RFC 8058 makes sufficient on its own: a forged
  request needs the token, and with it could only do what the link's holder may do anyway.
  Any other body goes through the CSRF check.

Forwarded newsletters carry this link, so whoever holds it may be someone else: no answer
here shows anything personal or carries another link's token (never the profile link).
"""

from __future__ import annotations

import falcon

from ...errors import NotFound
from ...links import UNSUBSCRIBE_PATH
from .base import EXPIRED_NOTICE, ReaderPages
from .csrf import FIELD_NAME
from .forms import FormData

ONE_CLICK_FIELD = "List-Unsubscribe"
ONE_CLICK_VALUE = "One-Click"


def is_one_click(form: FormData) -> bool:
    """Exactly the RFC 8058 body: one field ``List-Unsubscribe`` with value ``One-Click``."""
    return form.fields == {ONE_CLICK_FIELD: [ONE_CLICK_VALUE]}


class UnsubscribePage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages
        self.subscribers = pages.service.subscribers

    def _ask(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        *,
        status: str = falcon.HTTP_200,
        notice: str | None = None,
    ) -> None:
        self.pages.show_form(
            req,
            resp,
            "unsubscribe.html",
            status=status,
            state="ask",
            notice=notice,
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.subscribers.find_by_token("unsubscribe", token)
        if record is None:
            self.pages.not_found(resp)
        elif record.status == "unsubscribed":
            self.pages.render(resp, "unsubscribe.html", state="already")
        else:
            self._ask(req, resp)

    def on_head(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        found = self.subscribers.find_by_token("unsubscribe", token) is not None
        resp.status = falcon.HTTP_200 if found else falcon.HTTP_404
        resp.content_type = "text/html; charset=utf-8"
        resp.set_header("Cache-Control", "no-store")

    def on_post(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        form = self.pages.read_form(req, resp, allow_multipart=True)
        if form is None:
            return
        before = self.subscribers.find_by_token("unsubscribe", token)
        if before is None:
            self.pages.not_found(resp)
            return
        if not is_one_click(form):
            retry = self.pages.url(f"{UNSUBSCRIBE_PATH}/{token}")
            check = self.pages.check_form(req, resp, form.get(FIELD_NAME), retry)
            if check.verdict == "cross_site":
                return
            if not check.ok:
                self._ask(req, resp, status=falcon.HTTP_400, notice=EXPIRED_NOTICE)
                return
        try:
            self.subscribers.unsubscribe_by_token(token)
        except NotFound:
            self.pages.not_found(resp)
            return
        state = "already" if before.status == "unsubscribed" else "done"
        self.pages.render(resp, "unsubscribe.html", state=state)
