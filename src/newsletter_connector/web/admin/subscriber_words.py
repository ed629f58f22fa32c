"""A subscriber in words for the admin's subscriber page: its status, its contact fields (with
the labels the reader pages give their values), what became of the events about it, and why an
edit of its details was refused (:func:`edit_refusal_words`)."""

from __future__ import annotations

from datetime import datetime

from ...errors import InvalidRequest
from ...storage.outbox_records import SubscriberEventRecord
from ...storage.records import SubscriberRecord
from ..pages.choices import AGE_RANGES, CADENCES, CATEGORIES, GENDERS, TOPICS
from ..pages.profile import masked_phone

#: The cadences as the admin pages name them: a reader's page asks "Never", staff read "Off".
ADMIN_CADENCES: dict[str, str] = {**dict(CADENCES), "off": "Off"}
_CATEGORIES = dict(CATEGORIES)
_AGE_RANGES = dict(AGE_RANGES)
_GENDERS = dict(GENDERS)
#: The edit form's fields as a sentence names them (``the ZIP code must be ...``).
_EDIT_FIELD_WORDS: dict[str, str] = {
    "first_name": "the first name",
    "last_name": "the last name",
    "zip": "the ZIP code",
    "gender_self": "the gender in their own words",
    "age_range": "the age range",
    "gender": "the gender",
    "categories": "the choice of topics",
    **{topic.field: f"how often they get {topic.label}" for topic in TOPICS},
}
#: Text messages turned on for a reader with no phone number (which the admin area never edits).
_SMS_WITHOUT_PHONE = (
    "Send text messages: the reader has no phone number on record, so text messages cannot be "
    "turned on here"
)


def edit_refusal_words(error: InvalidRequest, form_field: str) -> str:
    """Why the edit form was refused, for its field ``form_field``, in words: the service's
    sentence with the field it names (``zip must be exactly 5 digits``) said as the page
    labels it (``The ZIP code must be exactly 5 digits``); a sentence naming no field as it
    is."""
    if (error.field or "").startswith("prefs.sms"):
        return _SMS_WITHOUT_PHONE
    named = f"{error.field} "
    words = _EDIT_FIELD_WORDS.get(form_field)
    if error.field and words and error.message.startswith(named):
        rest = error.message.removeprefix(named)
        if rest.startswith("must be one of"):  # the API's values, where the page has a list
            rest = "must be one of the choices in the list"
        return f"{words[0].upper()}{words[1:]} {rest}"
    return error.message


#: What each column of the subscribers' CSV file holds, in words (the export's column choices).
CSV_COLUMN_WORDS: dict[str, str] = {
    "email": "Email address",
    "first_name": "First name",
    "last_name": "Last name",
    "zip": "ZIP code",
    "phone": "Phone number",
    "status": "Status",
    "age_range": "Age range",
    "gender": "Gender",
    "gender_self": "Gender in their own words",
    "categories": "Topics",
    **{f"prefs_email_{topic.attr}": f"{topic.label}: how often" for topic in TOPICS},
    "prefs_sms_enabled": "Text messages",
    "profile_completed_at": "When they completed their profile",
    "created_at": "When they signed up",
    "confirmed_at": "When they confirmed",
    "unsubscribed_at": "When they unsubscribed",
}
#: Shown for a field the reader left empty.
NOT_GIVEN = "not given"


def _label(labels: dict[str, str], value: str | None) -> str:
    """The label of ``value`` (the value itself when it has none), or :data:`NOT_GIVEN`."""
    return labels.get(value, value) if value else NOT_GIVEN


def when(moment: datetime | None) -> str:
    """``moment`` as the admin pages write times (UTC, to the minute)."""
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else NOT_GIVEN


def status_words(record: SubscriberRecord) -> str:
    """One sentence: the status, since when (when that was stamped) and what it means."""
    if record.status == "confirmed":
        return f"Confirmed{_since(record.confirmed_at)}: gets the newsletter."
    if record.status == "pending":
        return (
            f"Pending{_since(record.created_at)}: has not followed the link in the "
            "confirmation email yet, so gets no newsletter."
        )
    if record.status == "unsubscribed":
        return f"Unsubscribed{_since(record.unsubscribed_at)}: gets no newsletter."
    return (
        f"Bounced{_since(record.bounced_at)}: mail to this address could not be delivered, "
        "so it gets no newsletter."
    )


def _since(moment: datetime | None) -> str:
    return f" since {when(moment)}" if moment else ""


def details(record: SubscriberRecord) -> list[tuple[str, str]]:
    """The contact's fields as (label, words) pairs, in the order the page lists them. The
    phone shows only its last four digits, as on the reader's own page."""
    name = " ".join(part for part in (record.first_name, record.last_name) if part)
    gender = _label(_GENDERS, record.gender)
    if record.gender == "self_described" and record.gender_self:
        gender = f"{gender}: {record.gender_self}"
    pairs = [
        ("Name", name or NOT_GIVEN),
        ("ZIP code", record.zip or NOT_GIVEN),
        *((topic.label, ADMIN_CADENCES[getattr(record.prefs, topic.attr)]) for topic in TOPICS),
        (
            "Topics",
            ", ".join(_CATEGORIES.get(c, c) for c in record.categories) or "every topic",
        ),
        ("Age", _label(_AGE_RANGES, record.age_range)),
        ("Gender", gender),
        ("Phone", masked_phone(record.phone) or NOT_GIVEN),
        ("Text messages", "on" if record.sms_enabled else "off"),
        ("Signed up", when(record.created_at)),
        (
            "Consent",
            f"{record.consent_source}, collected {when(record.consent_collected_at)}"
            if record.consent_source
            else "given by following the confirmation link"
            if record.confirmed_at
            else NOT_GIVEN,
        ),
        ("Preferences last saved by the reader", when(record.profile_completed_at)),
        ("Last changed", when(record.updated_at)),
    ]
    return pairs


def event_words(event: SubscriberEventRecord) -> str:
    """What became of one event: waiting, being sent, delivered (when) or failed."""
    if event.state is None:
        return "Waiting to be sent"
    if event.state == "delivered":
        return f"Delivered {when(event.settled_at)}"
    if event.state == "failed":
        return f"Failed after {event.attempts} attempts; see the failed outbox batches"
    if event.state == "sending":
        return "Being sent now"
    if event.attempts:
        return f"Waiting for a retry ({event.attempts} attempts so far)"
    return "Waiting to be sent"


def interval_words(seconds: int) -> str:
    """A resend interval in words: "15 minutes", "1 hour", "90 seconds"."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"
