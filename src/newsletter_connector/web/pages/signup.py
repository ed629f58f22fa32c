"""``/signup``: email, ZIP and frequency → a pending subscriber (``newsletter.signup`` queued by
the service) and a "check your email" page.

The same page follows whether the address was new, pending, confirmed or unsubscribed, so the
form does not reveal who is on the list; the service leaves existing subscribers unchanged.
A filled honeypot gets the same page and changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

import falcon

from ...errors import InvalidRequest
from ...links import SIGNUP_PATH
from .base import EXPIRED_NOTICE, ReaderPages, see_other
from .choices import SIGNUP_FREQUENCIES, TOPICS
from .csrf import FIELD_NAME
from .forms import FormData
from .messages import friendly_error

log = logging.getLogger(__name__)

DONE_PATH = SIGNUP_PATH + "/thanks"
DEFAULT_FREQUENCY = "daily"
#: Service field → form field.
FIELD_MAP = {"email": "email", "zip": "zip", "prefs": "frequency"} | {
    f"prefs.email.{topic.wire}": "frequency" for topic in TOPICS
}


def _values(form: FormData | None) -> dict[str, str]:
    if form is None:
        return {"email": "", "zip": "", "frequency": DEFAULT_FREQUENCY}
    return {
        "email": form.get("email").strip(),
        "zip": form.get("zip").strip(),
        "frequency": form.get("frequency"),
    }


def signup_body(values: dict[str, str]) -> dict[str, Any]:
    """The ``subscribe`` body for the form: the frequency becomes every email cadence."""
    body: dict[str, Any] = {"email": values["email"], "zip": values["zip"] or None}
    if values["frequency"]:
        body["prefs"] = {"email": {topic.wire: values["frequency"] for topic in TOPICS}}
    return body


class SignupPage:
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
            "signup.html",
            status=status,
            values=values,
            errors=errors or {},
            notice=notice,
            frequencies=SIGNUP_FREQUENCIES,
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._show(req, resp, _values(None))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        form = self.pages.read_form(req, resp)
        if form is None:
            return
        values = _values(form)
        check = self.pages.check_form(req, resp, form.get(FIELD_NAME), self.pages.url(SIGNUP_PATH))
        if check.verdict == "cross_site":
            return
        if not check.ok:
            self._show(req, resp, values, status=falcon.HTTP_400, notice=EXPIRED_NOTICE)
            return
        if form.honeypot_filled:
            log.info("signup form: honeypot filled in; nothing stored")
            see_other(resp, self.pages.url(DONE_PATH))
            return
        try:
            self.pages.service.subscribers.subscribe(signup_body(values))
        except InvalidRequest as error:
            errors = friendly_error(error, FIELD_MAP, "email")
            self._show(req, resp, values, status=falcon.HTTP_400, errors=errors)
            return
        see_other(resp, self.pages.url(DONE_PATH))


class SignupDonePage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.pages.render(resp, "signup_done.html")
