"""``/contact``: email, optional name and message → one row of the lossless contact-message log
and a queued ``contact.message`` event (both by ``service.messages.record``). A message is not a
newsletter signup. A filled honeypot gets the same "sent" page and stores nothing.
"""

from __future__ import annotations

import logging

import falcon

from ...errors import InvalidRequest
from ...links import CONTACT_PATH
from .base import EXPIRED_NOTICE, ReaderPages, see_other
from .csrf import FIELD_NAME
from .forms import FormData
from .messages import friendly_error

log = logging.getLogger(__name__)

DONE_PATH = CONTACT_PATH + "/thanks"
FIELD_MAP = {"email": "email", "name": "name", "message": "message"}


def _values(form: FormData | None) -> dict[str, str]:
    if form is None:
        return {"email": "", "name": "", "message": ""}
    return {
        "email": form.get("email").strip(),
        "name": form.get("name").strip(),
        "message": form.get("message"),
    }


class ContactPage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages

    def _show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        values: dict[str, str],
        *,
        status: str = falcon.HTTP_200,
        errors: dict[str, str] | None = None,
        notice: str | None = None,
    ) -> None:
        self.pages.show_form(
            req,
            resp,
            "contact.html",
            status=status,
            values=values,
            errors=errors or {},
            notice=notice,
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._show(req, resp, _values(None))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        form = self.pages.read_form(req, resp)
        if form is None:
            return
        values = _values(form)
        check = self.pages.check_form(req, resp, form.get(FIELD_NAME), self.pages.url(CONTACT_PATH))
        if check.verdict == "cross_site":
            return
        if not check.ok:
            self._show(req, resp, values, status=falcon.HTTP_400, notice=EXPIRED_NOTICE)
            return
        if form.honeypot_filled:
            log.info("contact form: honeypot filled in; nothing stored")
            see_other(resp, self.pages.url(DONE_PATH))
            return
        try:
            self.pages.service.messages.record(
                values["email"], values["name"] or None, values["message"]
            )
        except InvalidRequest as error:
            errors = friendly_error(error, FIELD_MAP, "message")
            self._show(req, resp, values, status=falcon.HTTP_400, errors=errors)
            return
        see_other(resp, self.pages.url(DONE_PATH))


class ContactDonePage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.pages.render(resp, "contact_done.html")
