"""``/profile/{token}``: the preference page. A save is one ``update_profile_by_token`` call;
a rejected one shows the form again with the reader's values and the error beside its field, a
successful one redirects to the page with a "saved" note.

The stored phone number is never shown in full, only its last four digits: the phone field
starts empty, leaving it empty keeps the stored number, typing one replaces it, and the "remove
my number" box clears it.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import falcon

from ...errors import InvalidRequest, NotFound
from ...i18n import N_
from ...links import PROFILE_PATH
from ...storage.records import SubscriberRecord
from .base import ReaderPages, see_other
from .choices import AGE_RANGES, CADENCES, CATEGORIES, GENDERS, TOPICS
from .forms import FormData
from .messages import friendly_error

TEXT_FIELDS = ("first_name", "last_name", "zip", "phone", "gender_self")
#: The box that clears the stored phone number (an empty phone field keeps it).
PHONE_CLEAR_FIELD = "phone_clear"
#: How many of the stored phone number's last digits the page shows.
PHONE_DIGITS_SHOWN = 4
#: Service field → form field.
FIELD_MAP: dict[str, str] = {
    **{name: name for name in (*TEXT_FIELDS, "age_range", "gender", "categories")},
    "prefs": "sms",
    "prefs.email": TOPICS[0].field,
    "prefs.sms": "sms",
    "prefs.sms.enabled": "sms",
    **{f"prefs.email.{topic.wire}": topic.field for topic in TOPICS},
}

STATUS_NOTES = {
    "pending": N_(
        "Your subscription is not confirmed yet: please click the link in the email we "
        "sent you. You can choose your topics now all the same."
    ),
    "unsubscribed": N_(
        "You are unsubscribed, so we do not send you the newsletter. Your choices are kept."
    ),
    "bounced": N_(
        "Our emails to your address could not be delivered, so we are not sending "
        "you the newsletter at the moment."
    ),
}


def masked_phone(phone: str | None) -> str:
    """``phone`` as the page may show it: its last four digits only, or ``""`` for none."""
    if not phone:
        return ""
    digits = "".join(c for c in phone if c.isdigit())
    return "•••• " + digits[-PHONE_DIGITS_SHOWN:]


def values_of_record(record: SubscriberRecord) -> dict[str, Any]:
    """The form's values for a stored subscriber (the phone field empty: see the module)."""
    return {
        "first_name": record.first_name or "",
        "last_name": record.last_name or "",
        "zip": record.zip or "",
        "phone": "",
        "phone_clear": False,
        "gender_self": record.gender_self or "",
        "cadences": {topic.field: getattr(record.prefs, topic.attr) for topic in TOPICS},
        "categories": set(record.categories),
        "age_range": record.age_range or "",
        "gender": record.gender or "",
        "sms": record.sms_enabled,
    }


def values_of_form(form: FormData) -> dict[str, Any]:
    """The form's values as the reader sent them (for showing the form again)."""
    values: dict[str, Any] = {name: form.get(name).strip() for name in TEXT_FIELDS}
    values.update(
        cadences={topic.field: form.get(topic.field) for topic in TOPICS},
        categories=set(form.get_list("categories")),
        age_range=form.get("age_range"),
        gender=form.get("gender"),
        sms=form.get("sms") == "yes",
        phone_clear=form.get(PHONE_CLEAR_FIELD) == "yes",
    )
    return values


def profile_fields(form: FormData) -> dict[str, Any]:
    """The ``update_profile_by_token`` fields for a submitted form: blank means cleared (but a
    blank phone keeps the stored one unless the "remove" box is ticked), an unticked SMS box
    means no SMS, cadences only for the topics the form sent."""
    values = values_of_form(form)
    fields: dict[str, Any] = {name: values[name] or None for name in TEXT_FIELDS}
    if not values["phone"] and not values["phone_clear"]:
        del fields["phone"]
    fields["prefs"] = {
        "email": {topic.wire: form.get(topic.field) for topic in TOPICS if form.has(topic.field)},
        "sms": {"enabled": values["sms"]},
    }
    fields["categories"] = sorted(values["categories"])
    fields["age_range"] = values["age_range"] or None
    fields["gender"] = values["gender"] or None
    return fields


class ProfilePage:
    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages

    def _show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        record: SubscriberRecord,
        values: dict[str, Any],
        *,
        saved: bool = False,
        **context: Any,
    ) -> None:
        """The form with ``values`` (and ``status``, ``errors`` or ``notice`` when given)."""
        self.pages.show_form(
            req,
            resp,
            "profile.html",
            values=values,
            saved=saved,
            status_note=STATUS_NOTES.get(record.status),
            stored_phone=masked_phone(record.phone),
            topics=TOPICS,
            cadences=CADENCES,
            categories=CATEGORIES,
            age_ranges=AGE_RANGES,
            genders=GENDERS,
            **context,
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        record = self.pages.find_by_token(resp, "profile", token)
        if record is None:
            return
        saved = req.get_param("saved") == "1" and record.profile_completed_at is not None
        self._show(req, resp, record, values_of_record(record), saved=saved)

    def on_post(self, req: falcon.Request, resp: falcon.Response, token: str) -> None:
        if self.pages.refused_for_volume(req, resp, "profile"):
            return
        record = self.pages.find_by_token(resp, "profile", token)
        if record is None:
            return
        form = self.pages.read_form(req, resp)
        if form is None:
            return
        page_url = self.pages.url(f"{PROFILE_PATH}/{token}")
        values = values_of_form(form)
        show_again = partial(self._show, req, resp, record, values)
        if not self.pages.form_accepted(req, resp, form, page_url, show_again):
            return
        try:
            self.pages.service.subscribers.update_profile_by_token(token, profile_fields(form))
        except NotFound:  # erased meanwhile
            self.pages.not_found(resp)
            return
        except InvalidRequest as error:
            errors = friendly_error(error, FIELD_MAP, "first_name")
            show_again(status=falcon.HTTP_400, errors=errors)
            return
        see_other(resp, page_url + "?saved=1")
