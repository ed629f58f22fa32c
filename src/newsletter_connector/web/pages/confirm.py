"""``/confirm/{token}``: the double opt-in link (SPEC 3: reaching ``confirm_url`` confirms).

- ``GET`` confirms a pending subscriber (``newsletter.confirmed`` is queued by the service) and
  offers the profile page. It is the redirect target of the platform's confirmation email, so
  it must act on a plain visit. A second visit says "already confirmed"; an unsubscribed or
  bounced reader is told the link cannot restart the newsletter; an unknown token gets the
  friendly not-found page (404).
- A request that announces itself as a prefetch (``Sec-Purpose``/``Purpose: prefetch``,
  ``X-Moz: prefetch``, ``X-Purpose: preview``) changes nothing and gets a page with a
  "Confirm my subscription" button instead; ``HEAD`` changes nothing either.
- ``POST`` (that button, with its CSRF token) confirms too.
"""

from __future__ import annotations

import falcon

from ...errors import NotFound
from ...links import CONFIRM_PATH, profile_url
from ...storage import SubscriberRecord
from .base import EXPIRED_NOTICE, ReaderPages
from .csrf import FIELD_NAME

_PREFETCH_HEADERS = (
    ("Sec-Purpose", "prefetch"),
    ("Purpose", "prefetch"),
    ("X-Purpose", "preview"),
    ("X-Moz", "prefetch"),
)


def is_prefetch(req: falcon.Request) -> bool:
    """True when the browser says this request is a prefetch or preview, not a visit."""
    return any(word in (req.get_header(header) or "").lower() for header, word in _PREFETCH_HEADERS)


class ConfirmPage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages
        self.subscribers = pages.service.subscribers

    def _outcome(self, resp: falcon.Response, before: SubscriberRecord, token: str) -> None:
        try:
            after = self.subscribers.confirm_by_token(token)
        except NotFound:
            self.pages.not_found(resp)
            return
        if after.status != "confirmed":
            state = "inactive"
        elif before.status == "pending":
            state = "confirmed"
        else:
            state = "already"
        self.pages.render(
            resp,
            "confirm.html",
            state=state,
            profile_url=profile_url(self.pages.settings, after.profile_token),
        )

    def _ask(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        *,
        status: str = falcon.HTTP_200,
        notice: str | None = None,
    ) -> None:
        self.pages.show_form(
            req, resp, "confirm.html", status=status, state="ask", notice=notice, profile_url=""
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.subscribers.find_by_token("confirm", token)
        if record is None:
            self.pages.not_found(resp)
        elif is_prefetch(req) and record.status == "pending":
            self._ask(req, resp)
        else:
            self._outcome(resp, record, token)

    def on_head(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        found = self.subscribers.find_by_token("confirm", token) is not None
        resp.status = falcon.HTTP_200 if found else falcon.HTTP_404
        resp.content_type = "text/html; charset=utf-8"
        resp.set_header("Cache-Control", "no-store")

    def on_post(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.subscribers.find_by_token("confirm", token)
        if record is None:
            self.pages.not_found(resp)
            return
        form = self.pages.read_form(req, resp)
        if form is None:
            return
        retry = self.pages.url(f"{CONFIRM_PATH}/{token}")
        check = self.pages.check_form(req, resp, form.get(FIELD_NAME), retry)
        if check.verdict == "cross_site":
            return
        if not check.ok:
            self._ask(req, resp, status=falcon.HTTP_400, notice=EXPIRED_NOTICE)
            return
        self._outcome(resp, record, token)
