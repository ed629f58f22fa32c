"""The contact representation (docs/newsletter-api.md, "Sign up") and the validation of contact
fields.

:func:`contact_payload` is the ONE serializer of a subscriber, for the API and every
``newsletter.*`` event payload alike. The parsers raise :class:`InvalidRequest` naming the field
(dotted when nested, e.g. ``prefs.email.local``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidRequest
from ..links import confirm_url, profile_url, unsubscribe_url
from ..settings import Settings
from ..storage.records import EmailPrefs, SubscriberData
from ..timeutil import to_naive_utc

STATUSES = ("pending", "confirmed", "unsubscribed", "bounced")
CADENCES = ("off", "daily", "weekly")
AGE_RANGES = ("under_55", "55_64", "65_74", "75_84", "85_plus")
GENDERS = ("woman", "man", "non_binary", "self_described")
CATEGORIES = (
    "health",
    "benefits",
    "money",
    "housing",
    "caregiving",
    "technology",
    "travel",
    "food",
)
#: Wire names of the email cadences, in the spec's order, with their record attribute.
EMAIL_PREF_FIELDS = (
    ("briefings", "briefings"),
    ("puzzles", "puzzles"),
    ("onThisDay", "on_this_day"),
    ("local", "local"),
)
DEFAULT_PREFS = EmailPrefs(briefings="daily", puzzles="daily", on_this_day="daily", local="daily")

MAX_EMAIL_LENGTH = 254
MAX_NAME_LENGTH = 200

_EMAIL_RE = re.compile(
    r"^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}@"
    r"(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"
)
#: Patterns valid in ECMA-262 and Python alike: matched whole, and stated as is in OpenAPI.
ZIP_PATTERN = "^[0-9]{5}$"
#: Digits, spaces and ``+ ( ) . -`` (a ``+`` only first), 7 to 32 characters, at least 7 digits.
PHONE_PATTERN = r"^(?=(?:[^0-9]*[0-9]){7})\+?[0-9 ().-]{7,31}$"
#: Text without control characters (C0 and DEL).
PRINTABLE_PATTERN = r"^[^\x00-\x1f\x7f]*$"
_ZIP_RE = re.compile(ZIP_PATTERN)
_PRINTABLE_RE = re.compile(PRINTABLE_PATTERN)
_PHONE_RE = re.compile(PHONE_PATTERN)


def contact_payload(record: SubscriberData, settings: Settings) -> dict[str, Any]:
    """The contact (docs/newsletter-api.md, "Sign up"), fields in the documented order:
    ``confirm_url`` only while pending, ``phone`` only with SMS consent; timestamps naive UTC, for
    ``json_encoding`` to write."""
    # Written out rather than looped over EMAIL_PREF_FIELDS: a walk page builds 500 of these
    # (bench subscriber_walk); test_contact_prefs_follow_the_fields keeps the keys in step.
    prefs = record.prefs
    completed, confirmed, unsubscribed = (
        record.profile_completed_at,
        record.confirmed_at,
        record.unsubscribed_at,
    )
    contact: dict[str, Any] = {
        "email": record.email,
        "first_name": record.first_name,
        "last_name": record.last_name,
        "zip": record.zip,
        "prefs": {
            "email": {
                "briefings": prefs.briefings,
                "puzzles": prefs.puzzles,
                "onThisDay": prefs.on_this_day,
                "local": prefs.local,
            },
            "sms": {"enabled": record.sms_enabled},
        },
        "status": record.status,
        "age_range": record.age_range,
        "gender": record.gender,
        "gender_self": record.gender_self,
        "categories": list(record.categories),
        "profile_completed_at": None if completed is None else to_naive_utc(completed),
        "created_at": to_naive_utc(record.created_at),
        "confirmed_at": None if confirmed is None else to_naive_utc(confirmed),
        "unsubscribed_at": None if unsubscribed is None else to_naive_utc(unsubscribed),
        "unsubscribe_url": unsubscribe_url(settings, record.unsubscribe_token),
        "profile_url": profile_url(settings, record.profile_token),
    }
    if record.status == "pending":
        contact["confirm_url"] = confirm_url(settings, record.confirm_token)
    if record.sms_enabled and record.phone:
        contact["phone"] = record.phone
    return contact


#: What stands in for a link's token wherever a contact is shown to a person.
MASKED_LINK_PART = "<token hidden>"
#: The contact's fields that carry a link token.
LINK_FIELDS = ("confirm_url", "unsubscribe_url", "profile_url")
_LINK_TOKEN = re.compile(r"/(confirm|unsubscribe|profile)/[A-Za-z0-9_-]+")


def hide_link_tokens(contact: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``contact`` whose link fields show :data:`MASKED_LINK_PART` in place of the
    token (``.../unsubscribe/<token hidden>``); every other field as it is."""
    shown = dict(contact)
    for name in LINK_FIELDS:
        if isinstance(shown.get(name), str):
            shown[name] = _LINK_TOKEN.sub(
                lambda m: f"/{m.group(1)}/{MASKED_LINK_PART}", shown[name]
            )
    return shown


# -- field parsers ---------------------------------------------------------------------------


def normalise_email(value: Any, field: str = "email") -> str:
    """A trimmed, lowercased, plausible address (ASCII, ``local@domain.tld``)."""
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string", field=field)
    email = value.strip().lower()
    if len(email) > MAX_EMAIL_LENGTH or not _EMAIL_RE.match(email) or ".." in email:
        raise InvalidRequest(f"{field} is not a valid email address", field=field)
    return email


def optional_text(value: Any, field: str, max_length: int = MAX_NAME_LENGTH) -> str | None:
    """A trimmed string, ``None`` for null or blank."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string or null", field=field)
    text = value.strip()
    if len(text) > max_length:
        raise InvalidRequest(f"{field} must be at most {max_length} characters", field=field)
    if not _PRINTABLE_RE.fullmatch(text):
        raise InvalidRequest(f"{field} must not contain control characters", field=field)
    check_encodable(text, field)
    return text or None


def check_encodable(text: str, field: str) -> str:
    """``text`` if it is valid Unicode (JSON can carry lone surrogates, which no database or
    UTF-8 response can hold), else :class:`InvalidRequest` naming ``field``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest(f"{field} is not valid Unicode text", field=field) from None
    return text


def optional_zip(value: Any, field: str = "zip") -> str | None:
    """Five ASCII digits, or ``None`` for null."""
    if value is None:
        return None
    if not isinstance(value, str) or not _ZIP_RE.fullmatch(value):
        raise InvalidRequest(f"{field} must be exactly 5 digits", field=field)
    return value


def optional_phone(value: Any, field: str = "phone") -> str | None:
    """A phone number (digits, spaces, ``+ ( ) . -``; at least 7 digits), or ``None``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} must be a string or null", field=field)
    phone = value.strip()
    if not _PHONE_RE.fullmatch(phone):
        raise InvalidRequest(
            f"{field} must be a phone number: digits, spaces, + ( ) . - and at least 7 digits",
            field=field,
        )
    return phone


def optional_enum(value: Any, field: str, allowed: tuple[str, ...]) -> str | None:
    """One of ``allowed``, or ``None`` for null."""
    if value is None:
        return None
    return enum_value(value, field, allowed)


def enum_value(value: Any, field: str, allowed: tuple[str, ...]) -> str:
    """One of ``allowed`` (not null)."""
    if not isinstance(value, str) or value not in allowed:
        raise InvalidRequest(f"{field} must be one of {', '.join(allowed)}", field=field)
    return value


def categories_value(value: Any, field: str = "categories") -> tuple[str, ...]:
    """Known category slugs, deduplicated, in the spec's order; unknown slugs are ignored.
    ``null`` clears (empty means all topics)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidRequest(f"{field} must be an array of strings", field=field)
    wanted = {item.strip().lower() for item in value}
    return tuple(slug for slug in CATEGORIES if slug in wanted)


def flag_value(value: Any, field: str) -> bool:
    """``true`` or ``false`` (not null, not a number)."""
    if not isinstance(value, bool):
        raise InvalidRequest(f"{field} must be true or false", field=field)
    return value


def require_object(value: Any, field: str = "body") -> Mapping[str, Any]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, Mapping):
        raise InvalidRequest(f"{field} must be a JSON object", field=field)
    return value
