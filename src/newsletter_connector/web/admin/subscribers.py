"""``/admin/subscribers``: find subscribers by address or its beginning, show one as the
Newsletter API returns it (link tokens hidden) with what the platform reported, act on it
(unsubscribe, mark bounced, erase after a confirm step) and export the confirmed ones as CSV.

Every act calls the service method its CLI twin calls (``subscribers unsubscribe``,
``subscribers bounce``, ``erase``) and is audited. An erasure's audit record names the
address's keyed hash, never the address: erasing means forgetting it.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ...service.events import subscriber_key
from ...service.subscriber_export import confirmed_csv
from ...storage.records import SubscriberRecord
from .base import AdminPages
from .gate import Admin
from .paths import (
    SUBSCRIBER,
    SUBSCRIBER_BOUNCE,
    SUBSCRIBER_ERASE,
    SUBSCRIBER_UNSUBSCRIBE,
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


class SubscribersPage:
    """GET: the search form, a page of results (``q``: the beginning of the address,
    ``after``: the last address of the previous page) and the export form."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
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


class SubscriberPage:
    """GET ``?email=``: the contact (link tokens hidden), the platform's reports and the acts;
    404 (still with the reports) when no subscriber has the address."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        email = req.get_param("email") or ""
        service = self.pages.service
        try:
            record = service.subscribers.get(email)
        except InvalidRequest as problem:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current=LABEL,
                title="Not an address",
                message=problem.message,
                back_to=SUBSCRIBERS,
                back_text="Back to Subscribers",
            )
            return
        except NotFound:
            record = None
        reports = service.feedback.about(email)
        contact = None if record is None else service.subscribers.shown_contact(record)
        self.pages.show(
            req,
            resp,
            admin,
            "subscriber.html",
            status=falcon.HTTP_200 if record else falcon.HTTP_404,
            current=LABEL,
            email=email.strip().lower() if record is None else record.email,
            record=record,
            contact_json=json.dumps(contact, indent=2, ensure_ascii=False),
            reports=reports,
            unsubscribe_url=self.pages.url(SUBSCRIBER_UNSUBSCRIBE),
            bounce_url=self.pages.url(SUBSCRIBER_BOUNCE),
            erase_url=self.pages.url(f"{SUBSCRIBER_ERASE}?{urlencode({'email': email})}"),
            list_url=self.pages.url(SUBSCRIBERS),
        )


class StatusAction:
    """POST ``email``: unsubscribe or mark bounced (as ``subscribers unsubscribe|bounce``),
    audited with the address, then back to the subscriber's page."""

    def __init__(self, pages: AdminPages, *, act: str) -> None:
        self.pages = pages
        self.act = act  # "unsubscribe" or "bounce"

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        form = self.pages.read_checked_form(req, resp, admin)
        if form is None:
            return
        subscribers = self.pages.service.subscribers
        change = subscribers.unsubscribe if self.act == "unsubscribe" else subscribers.mark_bounced
        try:
            before = subscribers.get(form.get("email"))
            after = change(before.email)
        except (InvalidRequest, NotFound) as problem:
            raise falcon.HTTPNotFound(description=problem.message) from None
        self.pages.audit(req, admin, f"subscriber.{self.act}", after.email)
        if after.status == before.status:
            message = f"{after.email} was already {after.status}; nothing changed."
        else:
            message = f"{after.email}: {before.status} → {after.status}."
        self.pages.flash.set(resp, message)
        self.pages.redirect(resp, subscriber_path(after.email))


class ErasePage:
    """GET ``?email=`` asks to confirm; POST erases everything stored about the address (as
    ``erase``), audits the address's keyed hash and returns to the search page."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        email = (req.get_param("email") or "").strip().lower()
        self._confirm(req, resp, admin, email)

    def _confirm(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        email: str,
        *,
        status: str = falcon.HTTP_200,
        error: str | None = None,
    ) -> None:
        self.pages.show(
            req,
            resp,
            admin,
            "subscriber_erase.html",
            status=status,
            current=LABEL,
            email=email,
            error=error,
            action_url=self.pages.url(SUBSCRIBER_ERASE),
            cancel_url=self.pages.url(subscriber_path(email) if email else SUBSCRIBERS),
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        form = self.pages.read_checked_form(req, resp, admin)
        if form is None:
            return
        email = form.get("email")
        try:
            result = self.pages.service.subscribers.erase_address(email)
        except InvalidRequest as error:
            self._confirm(
                req, resp, admin, email[:320], status=falcon.HTTP_400, error=error.message
            )
            return
        key = subscriber_key(self.pages.service.context, result.email)
        self.pages.audit(req, admin, "subscriber.erase", key)
        was = result.previous_status
        self.pages.flash.set(
            resp,
            ("No subscriber had the address" if was is None else f"Subscriber erased (was {was})")
            + f"; {result.erased_messages} contact messages erased, "
            f"{result.discarded_events} undelivered events discarded. The address is forgotten.",
        )
        self.pages.redirect(resp, SUBSCRIBERS)


class ExportAction:
    """POST: the confirmed subscribers as a CSV attachment, streamed (audited)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        if self.pages.read_checked_form(req, resp, admin) is None:
            return
        self.pages.audit(req, admin, "subscribers.export", "confirmed")
        day = self.pages.service.context.clock().strftime("%Y-%m-%d")
        resp.content_type = "text/csv; charset=utf-8"
        resp.set_header(
            "Content-Disposition", f'attachment; filename="subscribers-confirmed-{day}.csv"'
        )
        resp.set_header("Cache-Control", "no-store")
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.stream = confirmed_csv(self.pages.service.subscribers)
