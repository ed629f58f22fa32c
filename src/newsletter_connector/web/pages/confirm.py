"""``/confirm/{token}``: the double opt-in link (reaching ``confirm_url`` confirms:
docs/reader-pages.md, "Confirm").

``GET`` and the page's CSRF-checked ``POST`` confirm a pending subscriber. A request announcing
itself as a prefetch or preview gets a "Confirm my subscription" button instead, and ``HEAD``
changes nothing. The visit that confirms offers the profile page; later visits do not hand out its
token. Unsubscribed or bounced readers are told the link cannot restart the newsletter; an unknown
token gets the not-found page. See docs/contributing/decisions/reader-pages.md, "Reader pages".
"""

from __future__ import annotations

from functools import partial

import falcon

from ...errors import NotFound
from ...links import CONFIRM_PATH, profile_url
from ...storage.records import SubscriberRecord
from .base import ReaderPages

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

    def _outcome(self, resp: falcon.Response, before: SubscriberRecord, token: str) -> None:
        try:
            after = self.pages.service.subscribers.confirm_by_token(token)
        except NotFound:
            self.pages.not_found(resp)
            return
        if after.status != "confirmed":
            state = "inactive"
        elif before.status == "pending":
            state = "confirmed"
        else:
            state = "already"
        # only the visit that confirms hands out the profile link
        # (docs/contributing/decisions/reader-pages.md)
        link = profile_url(self.pages.settings, after.profile_token) if state == "confirmed" else ""
        self.pages.render(resp, "confirm.html", state=state, profile_url=link)

    def _ask(self, req: falcon.Request, resp: falcon.Response) -> partial[None]:
        """Shows the page with the confirm button, given ``status`` and ``notice``."""
        return partial(self.pages.show_form, req, resp, "confirm.html", state="ask", profile_url="")

    def on_get(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.pages.find_by_token(resp, "confirm", token)
        if record is None:
            return
        if is_prefetch(req) and record.status == "pending":
            self._ask(req, resp)()
        else:
            self._outcome(resp, record, token)

    def on_head(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        self.pages.answer_head(resp, "confirm", token)

    def on_post(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.pages.find_by_token(resp, "confirm", token)
        if record is None:
            return
        form = self.pages.read_form(req, resp)
        if form is None:
            return
        retry = self.pages.url(f"{CONFIRM_PATH}/{token}")
        if self.pages.form_accepted(req, resp, form, retry, self._ask(req, resp)):
            self._outcome(resp, record, token)
