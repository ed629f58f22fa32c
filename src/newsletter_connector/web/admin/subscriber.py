"""``/admin/subscribers/show?email=``: one subscriber laid out for people. The contact's fields
in words, the status acts (resend the confirmation of a pending reader, unsubscribe, mark
bounced), an edit form, the events about the reader still in the outbox with what became of
them, the platform's reports and the admin acts on the address.

The edit form saves through the service method ``PATCH /subscribers/{email}`` calls, so an
edit queues what an API edit queues. It may stop text messages at any time, but starts them only
for a reader with a mobile number and only with the provenance of their consent (where and when
they agreed), which the audit log keeps beside the act.
"""

from __future__ import annotations

from typing import Any

import falcon

from ...errors import InvalidRequest, NotFound
from ...service.feedback import SUPPRESSION_WORDS
from ...storage.records import SubscriberRecord
from ...sync.runner import DELIVERED_RETENTION
from ..pages.choices import AGE_RANGES, CADENCES, CATEGORIES, GENDERS, TOPICS
from ..pages.profile import FIELD_MAP, profile_fields, values_of_form, values_of_record
from .act import ActCall, Done, Unavailable
from .base import AdminPages
from .gate import Admin, signed_in
from .paths import (
    SUBSCRIBER_BOUNCE,
    SUBSCRIBER_EDIT,
    SUBSCRIBER_RESEND,
    SUBSCRIBER_UNSUBSCRIBE,
    SUBSCRIBERS,
)
from .subscriber_words import (
    details,
    edit_refusal_words,
    event_words,
    interval_words,
    status_words,
)
from .subscribers import LABEL, erase_path, subscriber_path

#: Events and admin acts the page lists, newest first.
SHOWN = 20
#: The field saying where and when a reader agreed to text messages.
SMS_CONSENT = "sms_consent"
#: Its longest accepted value, in characters.
MAX_SMS_CONSENT = 300
#: The choice the gender-in-their-own-words field goes with.
SELF_DESCRIBED = dict(GENDERS)["self_described"]


class SubscriberPage:
    """GET ``?email=``: the subscriber (404, still with the reports, when no subscriber has the
    address; 400 for a malformed address)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        email = req.get_param("email") or ""
        try:
            record = self.pages.service.subscribers.get(email)
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
        show_subscriber(self.pages, req, resp, admin, email, record)


def show_subscriber(
    pages: AdminPages,
    req: falcon.Request,
    resp: falcon.Response,
    admin: Admin,
    email: str,
    record: SubscriberRecord | None,
    *,
    values: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
) -> None:
    """The page of ``record`` (``None``: no subscriber has ``email``): the edit form with
    ``values`` (the stored ones when ``None``) and ``errors`` (then it answers 400)."""
    service = pages.service
    address = email.strip().lower() if record is None else record.email
    status = falcon.HTTP_400 if errors else falcon.HTTP_200 if record else falcon.HTTP_404
    interval = service.context.settings.confirmation_resend_interval
    pages.show(
        req,
        resp,
        admin,
        "subscriber.html",
        status=status,
        current=LABEL,
        email=address,
        record=record,
        status_words=status_words(record) if record else "",
        details=details(record) if record else [],
        values=values or ({**values_of_record(record), SMS_CONSENT: ""} if record else {}),
        errors=errors or {},
        topics=TOPICS,
        cadences=CADENCES,
        categories=CATEGORIES,
        age_ranges=AGE_RANGES,
        genders=GENDERS,
        self_described=SELF_DESCRIBED,
        resend_interval=interval_words(interval),
        retention_days=DELIVERED_RETENTION.days,
        events=service.admin.events_about(address, SHOWN) if record else [],
        event_words=event_words,
        reports=service.feedback.about(address),
        suppression_words=SUPPRESSION_WORDS,
        acts=service.admin_audit.latest_about(address, SHOWN),
        edit_url=pages.url(SUBSCRIBER_EDIT),
        resend_url=pages.url(SUBSCRIBER_RESEND),
        unsubscribe_url=pages.url(SUBSCRIBER_UNSUBSCRIBE),
        bounce_url=pages.url(SUBSCRIBER_BOUNCE),
        erase_url=pages.url(erase_path(address)),
        list_url=pages.url(SUBSCRIBERS),
    )


def _subscriber_of(call: ActCall) -> SubscriberRecord:
    """The subscriber the form's ``email`` names; a 404 when there is none (or no address)."""
    try:
        return call.service.subscribers.get(call.form.get("email"))
    except (InvalidRequest, NotFound) as problem:
        raise falcon.HTTPNotFound(description=problem.message) from None


def save_details(call: ActCall) -> Done:
    """Save the edit form (as ``PATCH /subscribers/{email}``, less the phone number, which the
    admin area never edits); the target is the address. Turning text messages on needs the
    consent's provenance, audited as the act's detail."""
    before = _subscriber_of(call)
    fields = profile_fields(call.form)
    fields.pop("phone", None)  # not edited here: a crafted form must not change or clear it
    detail = None
    if fields["prefs"]["sms"]["enabled"] and not before.sms_enabled:
        detail = f"text messages turned on; consent: {_sms_consent(call)}"
    try:
        after = call.service.subscribers.update(before.email, fields)
    except NotFound as problem:  # erased meanwhile
        raise falcon.HTTPNotFound(description=problem.message) from None
    changed = after != before
    return Done(
        after.email,
        flash="Details saved." if changed else "Nothing changed.",
        redirect_to=subscriber_path(after.email),
        detail=detail,
    )


def _sms_consent(call: ActCall) -> str:
    """The form's provenance of a reader's consent to text messages; :class:`InvalidRequest`
    naming :data:`SMS_CONSENT` when it is missing or too long."""
    consent = " ".join(call.form.get(SMS_CONSENT).split())
    if not consent:
        raise InvalidRequest(
            "say where and when the reader agreed to text messages, to turn them on",
            field=SMS_CONSENT,
        )
    if len(consent) > MAX_SMS_CONSENT:
        raise InvalidRequest(
            f"say where and when the reader agreed in {MAX_SMS_CONSENT} characters or fewer",
            field=SMS_CONSENT,
        )
    return consent


def details_refused(call: ActCall, error: InvalidRequest) -> None:
    """The page again (400) with the editor's values and the error, in words, beside its
    field."""
    record = _subscriber_of(call)
    field = (
        error.field
        if error.field == SMS_CONSENT
        else FIELD_MAP.get(error.field or "", "first_name")
    )
    show_subscriber(
        call.pages,
        call.req,
        call.resp,
        call.admin,
        record.email,
        record,
        values={**values_of_form(call.form), SMS_CONSENT: call.form.get(SMS_CONSENT)},
        errors={field: edit_refusal_words(error, field)},
    )


def resend_confirmation(call: ActCall) -> Done:
    """Ask the platform to send the confirmation email again (the service's rule: at most
    once per resend interval); the target is the address. Not pending is a 409 page."""
    record = _subscriber_of(call)
    try:
        result = call.service.subscribers.resend_confirmation(record.email)
    except InvalidRequest as problem:
        raise Unavailable(
            falcon.HTTP_409, current=LABEL, title="Not pending", message=problem.message
        ) from None
    interval = interval_words(call.service.context.settings.confirmation_resend_interval)
    if result.queued:
        message = "The platform is asked to send the confirmation email again."
    else:
        message = (
            f"Not sent: the confirmation email went out less than {interval} ago. Try again later."
        )
    return Done(record.email, flash=message, redirect_to=subscriber_path(record.email))
