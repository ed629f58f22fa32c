"""``/unsubscribe/{token}``: the opt-out link, including RFC 8058 one-click.

``GET`` and ``HEAD`` never change anything (link scanners fetch links in mail): the page shows
one "Unsubscribe" button. Its CSRF-checked ``POST`` unsubscribes; repeating it is harmless. A
``POST`` whose body is exactly ``List-Unsubscribe=One-Click`` unsubscribes (200, no redirect,
no cookie) without the CSRF check: the unguessable token in the URL is the authority
(docs/contributing/decisions/reader-pages.md, "Reader pages").

Forwarded newsletters carry this link, so whoever holds it may be someone else: no answer
here shows anything personal or carries another link's token (never the profile link).
"""

from __future__ import annotations

from functools import partial

import falcon

from ...errors import NotFound
from ...links import UNSUBSCRIBE_PATH
from .base import ReaderPages
from .forms import FormData

ONE_CLICK_FIELD = "List-Unsubscribe"
ONE_CLICK_VALUE = "One-Click"


def is_one_click(form: FormData) -> bool:
    """Exactly the RFC 8058 body: one field ``List-Unsubscribe`` with value ``One-Click``."""
    return form.fields == {ONE_CLICK_FIELD: [ONE_CLICK_VALUE]}


class UnsubscribePage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.pages.find_by_token(resp, "unsubscribe", token)
        if record is None:
            return
        if record.status == "unsubscribed":
            self.pages.render(resp, "unsubscribe.html", state="already")
        else:
            self.pages.show_form(req, resp, "unsubscribe.html", state="ask")

    def on_head(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        self.pages.answer_head(resp, "unsubscribe", token)

    def on_post(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        form = self.pages.read_form(req, resp, allow_multipart=True)
        if form is None:
            return
        before = self.pages.find_by_token(resp, "unsubscribe", token)
        if before is None:
            return
        if not is_one_click(form):
            retry = self.pages.url(f"{UNSUBSCRIBE_PATH}/{token}")
            ask = partial(self.pages.show_form, req, resp, "unsubscribe.html", state="ask")
            if not self.pages.form_accepted(req, resp, form, retry, ask):
                return
        try:
            self.pages.service.subscribers.unsubscribe_by_token(token)
        except NotFound:
            self.pages.not_found(resp)
            return
        state = "already" if before.status == "unsubscribed" else "done"
        self.pages.render(resp, "unsubscribe.html", state=state)
