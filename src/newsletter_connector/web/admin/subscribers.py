"""``/admin/subscribers``: find subscribers by address or its beginning, act on one
(unsubscribe, mark bounced, erase after a confirm step) and export the confirmed ones as CSV.
One subscriber's page is :mod:`.subscriber`.

Every act calls the service method its CLI twin calls (``subscribers unsubscribe``,
``subscribers bounce``, ``erase``) and is audited. An erasure's audit record names the
address's keyed hash, never the address: erasing means forgetting it.
"""

from __future__ import annotations

from urllib.parse import urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ...service.events import subscriber_key
from ...service.subscriber_export import confirmed_csv
from ...storage.records import SubscriberRecord
from .act import ActCall, Done
from .base import AdminPages
from .gate import signed_in
from .paths import (
    SUBSCRIBER,
    SUBSCRIBER_ERASE,
    SUBSCRIBERS,
    SUBSCRIBERS_EXPORT,
)

#: Subscribers listed per page of search results.
PAGE_SIZE = 50
#: What the page is called in the navigation.
LABEL = "Subscribers"


def subscriber_path(email: str) -> str:
    """The app path of the subscriber page of ``email``."""
    return f"{SUBSCRIBER}?{urlencode({'email': email})}"


def erase_path(email: str) -> str:
    """The app path of the step confirming the erasure of ``email``."""
    return f"{SUBSCRIBER_ERASE}?{urlencode({'email': email})}"


class SubscribersPage:
    """GET: the search form, a page of results (``q``: the beginning of the address,
    ``after``: the last address of the previous page) and the export form."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        query = req.get_param("q")
        after = req.get_param("after")
        found: list[SubscriberRecord] | None = None
        next_url = None
        error = None
        status = falcon.HTTP_200
        if query is not None:
            try:
                page = self.pages.service.subscribers.find_by_prefix(query, after, PAGE_SIZE)
            except InvalidRequest as problem:
                error, status = problem.message, falcon.HTTP_400
            else:
                found = page.items
                if page.next_cursor is not None:
                    more = urlencode({"q": query, "after": page.next_cursor})
                    next_url = self.pages.url(f"{SUBSCRIBERS}?{more}")
        self.pages.show(
            req,
            resp,
            admin,
            "subscribers.html",
            status=status,
            current=LABEL,
            query=query or "",
            searched=query is not None and error is None,
            error=error,
            found=[
                (record, self.pages.url(subscriber_path(record.email))) for record in found or []
            ],
            next_url=next_url,
            search_url=self.pages.url(SUBSCRIBERS),
            export_url=self.pages.url(SUBSCRIBERS_EXPORT),
        )


def change_status(call: ActCall, act: str) -> Done:
    """Unsubscribe (``act`` "unsubscribe") or mark bounced ("bounce") the form's ``email``;
    the target is the address, then back to its page saying what changed. No such
    subscriber (or not an address) is a 404."""
    subscribers = call.service.subscribers
    change = subscribers.unsubscribe if act == "unsubscribe" else subscribers.mark_bounced
    try:
        before = subscribers.get(call.form.get("email"))
        after = change(before.email)
    except (InvalidRequest, NotFound) as problem:
        raise falcon.HTTPNotFound(description=problem.message) from None
    if after.status == before.status:
        message = f"{after.email} was already {after.status}; nothing changed."
    else:
        message = f"{after.email}: {before.status} → {after.status}."
    return Done(after.email, flash=message, redirect_to=subscriber_path(after.email))


def confirm_erase(call: ActCall) -> None:
    """GET ``?email=``: asks to confirm erasing the address."""
    email = (call.req.get_param("email") or "").strip().lower()
    _erase_form(call, email)


def erase_refused(call: ActCall, error: InvalidRequest) -> None:
    """The confirm step again (400) with the message."""
    email = call.form.get("email")[:320]
    _erase_form(call, email, status=falcon.HTTP_400, error=error.message)


def _erase_form(
    call: ActCall, email: str, *, status: str = falcon.HTTP_200, error: str | None = None
) -> None:
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "subscriber_erase.html",
        status=status,
        current=LABEL,
        email=email,
        error=error,
        action_url=call.pages.url(SUBSCRIBER_ERASE),
        cancel_url=call.pages.url(subscriber_path(email) if email else SUBSCRIBERS),
    )


def erase(call: ActCall) -> Done:
    """Erase everything stored about the form's ``email`` (as ``erase``); the target is the
    address's keyed hash, never the address: erasing means forgetting it."""
    result = call.service.subscribers.erase_address(call.form.get("email"))
    was = result.previous_status
    return Done(
        subscriber_key(call.service.context, result.email),
        flash=("No subscriber had the address" if was is None else f"Subscriber erased (was {was})")
        + f"; {result.erased_messages} contact messages erased, "
        f"{result.discarded_events} undelivered events discarded. The address is forgotten.",
    )


def export_confirmed(call: ActCall) -> Done:
    """The confirmed subscribers as a CSV attachment, streamed; the target is "confirmed"."""

    def answer() -> None:
        resp = call.resp
        day = call.service.context.clock().strftime("%Y-%m-%d")
        resp.content_type = "text/csv; charset=utf-8"
        resp.set_header(
            "Content-Disposition", f'attachment; filename="subscribers-confirmed-{day}.csv"'
        )
        resp.set_header("Cache-Control", "no-store")
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.stream = confirmed_csv(call.service.subscribers)

    return Done("confirmed", answer=answer)
