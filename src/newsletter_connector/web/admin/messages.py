"""``/admin/messages``: the contact-form log, newest first, keyset-paged, each message with a
reply link (``mailto:`` the sender, subject "Re: your message")."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import falcon

from ...errors import InvalidRequest
from .base import AdminPages
from .gate import signed_in
from .paths import MESSAGES

#: Messages per page.
PAGE_SIZE = 50
#: The subject of a reply.
REPLY_SUBJECT = "Re: your message"
#: What the page is called in the navigation.
LABEL = "Contact messages"


def reply_link(email: str) -> str:
    """A ``mailto:`` link to ``email`` with :data:`REPLY_SUBJECT`, every part percent-encoded
    (RFC 6068) so an address or subject cannot add headers or recipients."""
    subject = quote(REPLY_SUBJECT, safe="")
    return f"mailto:{quote(email, safe='@')}?subject={subject}"


class MessagesPage:
    """GET: one page of messages (``cursor``: where the previous page ended)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        try:
            page = self.pages.service.messages.newest_page(req.get_param("cursor"), PAGE_SIZE)
        except InvalidRequest as problem:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current=LABEL,
                title="Not a page of messages",
                message=problem.message,
                back_to=MESSAGES,
                back_text="Back to the newest messages",
            )
            return
        next_url = None
        if page.next_cursor is not None:
            next_url = self.pages.url(f"{MESSAGES}?{urlencode({'cursor': page.next_cursor})}")
        self.pages.show(
            req,
            resp,
            admin,
            "messages.html",
            current=LABEL,
            messages=[(record, reply_link(record.email)) for record in page.items],
            next_url=next_url,
            first_page=req.get_param("cursor") is None,
            newest_url=self.pages.url(MESSAGES),
        )
