"""``/admin/subscribers``: the subscriber list, filtered and sorted, and acts on one
(unsubscribe, mark bounced, erase after a confirm step) and export the confirmed ones as CSV.
One subscriber's page is :mod:`.subscriber`.

Every act calls the service method its CLI twin calls (``subscribers unsubscribe``,
``subscribers bounce``, ``erase``) and is audited. An erasure's audit record names the
address's keyed hash, never the address: erasing means forgetting it.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ...model.contact import STATUSES
from ...service import subscriber_list
from ...service.events import subscriber_key
from ...service.subscriber_export import CSV_COLUMNS, confirmed_csv
from ...service.subscriber_list import ListPage, MatchCount
from ...storage.records import SubscriberRecord
from ..pages.choices import AGE_RANGES, CATEGORIES, TOPICS
from .act import ActCall, Done
from .base import AdminPages
from .gate import signed_in
from .paths import (
    IMPORTS,
    SUBSCRIBER,
    SUBSCRIBER_ERASE,
    SUBSCRIBER_JOBS,
    SUBSCRIBERS,
    SUBSCRIBERS_ALL,
    SUBSCRIBERS_BULK,
    SUBSCRIBERS_BULK_ERASE,
    SUBSCRIBERS_EXPORT,
    SUBSCRIBERS_EXPORT_MATCHING,
    SUBSCRIBERS_EXPORT_SELECTED,
)
from .roles import may_use
from .subscriber_filter import FILTER_PARAMS, ListRequest, parse_list_request
from .subscriber_words import ADMIN_CADENCES, CSV_COLUMN_WORDS

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
    """GET: the subscriber list, newest first, with the number matching and the filter form;
    every filter, the sort and the page's start are query parameters
    (:mod:`.subscriber_filter`). A mistake in one is a 400 naming it, with the form."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        wanted = parse_list_request(
            {name: req.get_param(name) or "" for name in (*FILTER_PARAMS, *PAGE_PARAMS)}
        )
        listing = self.pages.service.subscriber_list
        page = count = None
        if not wanted.errors:
            page = listing.page(
                wanted.filter,
                order=wanted.order,
                descending=wanted.descending,
                start=wanted.start,
                backwards=wanted.backwards,
                limit=PAGE_SIZE,
            )
            count = listing.count(wanted.filter)
        self.pages.show(
            req,
            resp,
            admin,
            "subscribers.html",
            status=falcon.HTTP_400 if wanted.errors else falcon.HTTP_200,
            current=LABEL,
            wanted=wanted,
            filtered=not wanted.filter.is_empty(),
            more_filters=any(name in wanted.values for name in MORE_FILTERS),
            count=count,
            rows=[_row(record, self.pages) for record in page.items] if page else [],
            links=_page_links(wanted, page, self.pages) if page else None,
            choices=FILTER_CHOICES,
            budget=subscriber_list.BUDGET,
            list_url=self.pages.url(SUBSCRIBERS),
            bulk_url=self.pages.url(SUBSCRIBERS_BULK),
            all_url=self.pages.url(SUBSCRIBERS_ALL),
            jobs_url=self.pages.url(SUBSCRIBER_JOBS),
            all_matching=how_many(count) if count else "",
            export_selected_url=self.pages.url(SUBSCRIBERS_EXPORT_SELECTED),
            export_matching_url=self.pages.url(SUBSCRIBERS_EXPORT_MATCHING),
            imports_url=self.pages.url(IMPORTS) if may_use(admin.role, IMPORTS) else None,
            may_erase=may_use(admin.role, SUBSCRIBERS_BULK_ERASE),
            filter_query=req.query_string[:2000],
            csv_columns=[(column, CSV_COLUMN_WORDS[column]) for column in CSV_COLUMNS],
            export_url=self.pages.url(SUBSCRIBERS_EXPORT),
        )


#: The filters folded under "More filters" (open when one of them is set).
MORE_FILTERS = frozenset(FILTER_PARAMS) - {"address", "name", "status"}
#: Query parameters that say where a page starts (besides the filter's).
PAGE_PARAMS = ("sort", "after", "before")
#: The filter form's choices: parameter -> (value, label) pairs, "any" first.
FILTER_CHOICES = {
    "status": [("", "Any status"), *((s, s.capitalize()) for s in STATUSES)],
    "category": [("", "Any topic"), *CATEGORIES],
    "cadence": [
        ("", "Any"),
        *ADMIN_CADENCES.items(),
    ],
    "sms": [("", "Either"), ("yes", "Yes"), ("no", "No")],
    "age": [("", "Any age"), *((v, label) for v, label in AGE_RANGES if v)],
    "sort": [
        ("newest", "Newest first"),
        ("oldest", "Oldest first"),
        ("address", "Address, A to Z"),
        ("address_desc", "Address, Z to A"),
    ],
    "topics": [(topic.attr, topic.label) for topic in TOPICS],
}


def how_many(count: MatchCount) -> str:
    """The number matching as the "all matching" acts name it."""
    if count.number is None:
        return f"at least {count.at_least:,}"
    return f"{count.number:,}" if count.exact else f"about {count.number:,}"


def _row(record: SubscriberRecord, pages: AdminPages) -> dict[str, str]:
    name = " ".join(part for part in (record.first_name, record.last_name) if part)
    return {
        "email": record.email,
        "url": pages.url(subscriber_path(record.email)),
        "name": name,
        "status": record.status.capitalize(),
        "zip": record.zip or "",
        "signed_up": record.created_at.strftime("%Y-%m-%d"),
    }


def _page_links(wanted: ListRequest, page: ListPage, pages: AdminPages) -> dict[str, str | None]:
    """The pager: the ``earlier`` and ``later`` pages' addresses (``None``: no such page), and
    which of the two, if either, searches further (``searching``)."""
    earlier = later = None
    if page.earlier is not None:
        earlier = pages.url(f"{SUBSCRIBERS}?{wanted.at(page.earlier, backwards=True)}")
    if page.later is not None:
        later = pages.url(f"{SUBSCRIBERS}?{wanted.at(page.later, backwards=False)}")
    searching = ("earlier" if wanted.backwards else "later") if page.searched else None
    return {"earlier": earlier, "later": later, "searching": searching}


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
    chunks = confirmed_csv(call.service.subscribers)
    return Done("confirmed", answer=lambda: answer_csv(call, "confirmed", chunks))


def answer_csv(call: ActCall, name: str, chunks: Iterator[bytes]) -> None:
    """Answer ``chunks`` as the CSV attachment ``subscribers-<name>-<day>.csv``, streamed,
    never cached or sniffed."""
    resp = call.resp
    day = call.service.context.clock().strftime("%Y-%m-%d")
    resp.content_type = "text/csv; charset=utf-8"
    resp.set_header("Content-Disposition", f'attachment; filename="subscribers-{name}-{day}.csv"')
    resp.set_header("Cache-Control", "no-store")
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.stream = chunks
