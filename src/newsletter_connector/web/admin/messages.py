"""``/admin/messages``: the contact-form log, newest first, keyset-paged (``?show=unhandled``:
only the messages no admin marked handled), each message with a reply link (``mailto:`` the
sender, subject "Re: your message", the message quoted) and its handled mark (by whom, when)
or the button making one. Marking never changes the message."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ...storage.records import ContactMessageRecord
from .act import ActCall, Done, posted_id
from .base import AdminPages
from .gate import signed_in
from .paths import MESSAGE_HANDLED, MESSAGE_UNHANDLED, MESSAGES

#: Messages per page.
PAGE_SIZE = 50
#: The subject of a reply.
REPLY_SUBJECT = "Re: your message"
#: What the page is called in the navigation.
LABEL = "Contact messages"


#: The most of a message a reply quotes: a ``mailto:`` link much longer than a few thousand
#: characters is cut short by some browsers and mail programs.
MAX_QUOTED = 1500
#: The ``show`` value of the unhandled-only view.
UNHANDLED = "unhandled"


def quoted(record: ContactMessageRecord) -> str:
    """The body of a reply: two empty lines, then the message quoted with ``> `` under a line
    saying who wrote it when (at most :data:`MAX_QUOTED` characters of it, then ``[...]``)."""
    text = record.message if len(record.message) <= MAX_QUOTED else record.message[:MAX_QUOTED]
    lines = [f"> {line}" if line else ">" for line in text.splitlines()]
    if len(record.message) > MAX_QUOTED:
        lines.append("> [...]")
    sender = record.name or record.email
    when = record.submitted_at.strftime("%Y-%m-%d %H:%M UTC")
    return "\r\n".join(["", "", f"On {when}, {sender} wrote:", *lines])


def reply_link(record: ContactMessageRecord) -> str:
    """A ``mailto:`` link to the sender with :data:`REPLY_SUBJECT` and the message
    :func:`quoted`, every part percent-encoded (RFC 6068) so an address, subject or message
    cannot add headers or recipients."""
    subject = quote(REPLY_SUBJECT, safe="")
    body = quote(quoted(record), safe="")
    return f"mailto:{quote(record.email, safe='@')}?subject={subject}&body={body}"


def view_path(show: str | None, cursor: str | None = None) -> str:
    """The app path of the messages view ``show`` (all, or :data:`UNHANDLED`) at ``cursor``."""
    query = {"show": UNHANDLED} if show == UNHANDLED else {}
    if cursor is not None:
        query["cursor"] = cursor
    return f"{MESSAGES}?{urlencode(query)}" if query else MESSAGES


class MessagesPage:
    """GET: one page of messages (``cursor``: where the previous page ended)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        show = UNHANDLED if req.get_param("show") == UNHANDLED else None
        messages = self.pages.service.messages
        try:
            page = messages.newest_page(
                req.get_param("cursor"), PAGE_SIZE, unhandled=show == UNHANDLED
            )
        except InvalidRequest as problem:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current=LABEL,
                title="Not a page of messages",
                message=problem.message,
                back_to=view_path(show),
                back_text="Back to the newest messages",
            )
            return
        next_url = None
        if page.next_cursor is not None:
            next_url = self.pages.url(view_path(show, page.next_cursor))
        marks = messages.handling_of(page.items)
        self.pages.show(
            req,
            resp,
            admin,
            "messages.html",
            current=LABEL,
            messages=[(record, reply_link(record), marks.get(record.id)) for record in page.items],
            show=show or "",
            next_url=next_url,
            first_page=req.get_param("cursor") is None,
            newest_url=self.pages.url(view_path(show)),
            all_url=self.pages.url(MESSAGES),
            unhandled_url=self.pages.url(view_path(UNHANDLED)),
            handled_url=self.pages.url(MESSAGE_HANDLED),
            unhandled_act_url=self.pages.url(MESSAGE_UNHANDLED),
        )


def mark_handled(call: ActCall) -> Done:
    """Mark the form's message handled by this admin; back to the view the form was on (no
    such message: a 404)."""
    message_id = posted_id(call, "message_id")
    try:
        call.service.messages.mark_handled(message_id, by=call.admin.name)
    except NotFound:
        raise falcon.HTTPNotFound() from None
    return Done(
        f"message {message_id}",
        flash=f"Message {message_id} is marked handled.",
        redirect_to=view_path(call.form.get("show")),
    )


def mark_unhandled(call: ActCall) -> Done:
    """Take the form's message's handled mark away; back to the view the form was on."""
    message_id = posted_id(call, "message_id")
    call.service.messages.mark_unhandled(message_id)
    return Done(
        f"message {message_id}",
        flash=f"Message {message_id} is marked not handled.",
        redirect_to=view_path(call.form.get("show")),
    )
