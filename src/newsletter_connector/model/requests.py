"""The Newsletter API's JSON request bodies as pydantic models (docs/newsletter-api.md): one model
per body.

Each constrained field's type carries both its rule (the ``model.contact`` parser, run as a
before-validator) and the JSON Schema keywords stating it, so the OpenAPI document states what
validation enforces. :func:`parse_request` turns the first problem into ``InvalidRequest``
naming the dotted field path, or ``ConsentRequired`` for anything inside ``consent``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic.config import JsonDict
from pydantic_core import ErrorDetails, PydanticCustomError

from ..errors import ConsentRequired, InvalidRequest, NewsletterError
from ..storage.records import EmailPrefs
from ..timeutil import parse_timestamp
from .contact import (
    AGE_RANGES,
    CADENCES,
    CATEGORIES,
    EMAIL_PREF_FIELDS,
    GENDERS,
    MAX_EMAIL_LENGTH,
    MAX_NAME_LENGTH,
    PHONE_PATTERN,
    PRINTABLE_PATTERN,
    ZIP_PATTERN,
    categories_value,
    enum_value,
    flag_value,
    normalise_email,
    optional_enum,
    optional_phone,
    optional_text,
    optional_zip,
    require_object,
)

MAX_CONSENT_SOURCE_LENGTH = 200
#: A consent source: printable (``PRINTABLE_PATTERN``) and not blank.
_SOURCE_PATTERN = r"^(?=.*\S)[^\x00-\x1f\x7f]*$"
_PRINTABLE_RE = re.compile(PRINTABLE_PATTERN)
#: Contact fields only the service sets; a PATCH may echo them with their current values.
READ_ONLY_FIELDS = (
    "email",
    "profile_completed_at",
    "created_at",
    "confirmed_at",
    "unsubscribed_at",
    "unsubscribe_url",
    "profile_url",
    "confirm_url",
)
#: Stands for the field's dotted path in a rule's message until :func:`parse_request` knows it.
_FIELD = "{field}"
_INVALID = "invalid_request"
_CONSENT = "consent_required"
_ECHO_NOTE = (
    "read-only: accepted only with its current value (what GET returned; timestamps compared as "
    "instants, email in any case), which changes nothing; any other value is invalid_request"
)

Body = TypeVar("Body", bound="RequestBody")
#: The default of a field that may not be null: only read when it was sent (``model_fields_set``).
_UNSENT: Any = None


def field_rule(parse: Callable[[Any, str], Any]) -> BeforeValidator:
    """A before-validator running a ``model.contact`` parser, its message worded with the
    field still a placeholder."""

    def validate(value: Any) -> Any:
        try:
            return parse(value, _FIELD)
        except InvalidRequest as exc:
            raise PydanticCustomError(_INVALID, exc.message) from None

    return BeforeValidator(validate)


def _read_only(value: Any, field: str) -> Any:
    if not isinstance(value, str):
        raise InvalidRequest(f"{field} is read-only: send its current value or leave it out")
    return value


def _read_only_or_null(value: Any, field: str) -> Any:
    return None if value is None else _read_only(value, field)


def _unsubscribe_only(value: Any, field: str) -> Any:
    if value != "unsubscribed":
        raise InvalidRequest(
            f"{field} can only be set to unsubscribed (nothing skips double opt-in); "
            "leave it out to keep the current status"
        )
    return value


def _kept_prefs(value: Any, field: str) -> Any:
    if value is None:
        raise InvalidRequest(f"{field} cannot be cleared; set each cadence instead")
    return value


def _consent_source(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PydanticCustomError(_CONSENT, "consent.source must be a non-blank string")
    source = value.strip()
    if len(source) > MAX_CONSENT_SOURCE_LENGTH:
        raise PydanticCustomError(
            _CONSENT, f"consent.source must be at most {MAX_CONSENT_SOURCE_LENGTH} characters"
        )
    if not _PRINTABLE_RE.fullmatch(value) or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise PydanticCustomError(_CONSENT, "consent.source must be printable Unicode text")
    return source


def _consent_instant(value: Any) -> datetime:
    collected_at = parse_timestamp(value) if isinstance(value, str) else None
    if collected_at is None:
        raise PydanticCustomError(
            _CONSENT, "consent.collected_at must be an ISO-8601 timestamp with a time zone"
        )
    return collected_at


# -- field types: the rule and the schema keywords stating it ---------------------------------

Email = Annotated[
    str,
    Field(max_length=MAX_EMAIL_LENGTH, json_schema_extra={"format": "email"}),
    field_rule(normalise_email),
]
Name = Annotated[
    Annotated[str, Field(max_length=MAX_NAME_LENGTH, pattern=PRINTABLE_PATTERN)] | None,
    Field(description="trimmed; blank is null"),
    field_rule(optional_text),
]
Zip = Annotated[Annotated[str, Field(pattern=ZIP_PATTERN)] | None, field_rule(optional_zip)]
Phone = Annotated[
    Annotated[str, Field(json_schema_extra={"pattern": PHONE_PATTERN})] | None,
    field_rule(optional_phone),
]
Cadence = Annotated[
    str,
    Field(json_schema_extra={"enum": list(CADENCES)}),
    field_rule(partial(enum_value, allowed=CADENCES)),
]
AgeRange = Annotated[
    Annotated[str, Field(json_schema_extra={"enum": list(AGE_RANGES)})] | None,
    field_rule(partial(optional_enum, allowed=AGE_RANGES)),
]
Gender = Annotated[
    Annotated[str, Field(json_schema_extra={"enum": list(GENDERS)})] | None,
    field_rule(partial(optional_enum, allowed=GENDERS)),
]
Categories = Annotated[
    tuple[str, ...] | None,
    Field(
        description=f"topic slugs ({', '.join(CATEGORIES)}); unrecognised slugs are ignored, "
        "null or empty means all topics"
    ),
    field_rule(categories_value),
]
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Url = Annotated[str, Field(json_schema_extra={"format": "uri"})]
_echoed = field_rule(_read_only)
_echoed_or_null = field_rule(_read_only_or_null)
_echo_note = Field(description=_ECHO_NOTE)


# -- bodies ------------------------------------------------------------------------------------


class RequestBody(BaseModel):
    """Base of the body models: unknown fields are refused, the model is immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Contact fields not in this body: naming one is "read-only" rather than "unknown".
    read_only_extras: ClassVar[frozenset[str]] = frozenset()


class EmailPrefsChange(RequestBody):
    """Email cadences to change; omitted ones keep their value."""

    briefings: Cadence = Field(default=_UNSENT)
    puzzles: Cadence = Field(default=_UNSENT)
    on_this_day: Cadence = Field(default=_UNSENT, alias="onThisDay")
    local: Cadence = Field(default=_UNSENT)


class SmsPrefsChange(RequestBody):
    """SMS consent; enabling it needs a phone number (sent with it or already stored)."""

    enabled: Annotated[bool, field_rule(flag_value)] = Field(default=_UNSENT)


class PrefsChange(RequestBody):
    """Partial preferences: omitted entries keep their current (or default) value."""

    email: EmailPrefsChange = Field(default=_UNSENT)
    sms: SmsPrefsChange = Field(default=_UNSENT)

    def applied_to(self, prefs: EmailPrefs, sms_enabled: bool) -> tuple[EmailPrefs, bool]:
        """``(prefs, sms_enabled)`` with the entries this change sets replaced."""
        if "email" in self.model_fields_set:
            cadences = {attr: getattr(prefs, attr) for _, attr in EMAIL_PREF_FIELDS}
            cadences.update(self.email.model_dump(exclude_unset=True))
            prefs = EmailPrefs(**cadences)
        if "sms" in self.model_fields_set and "enabled" in self.sms.model_fields_set:
            sms_enabled = self.sms.enabled
        return prefs, sms_enabled


class Consent(RequestBody):
    """Consent collected elsewhere: `source` and `collected_at` are required together (never one
    alone) and `collected_at` must not be in the future; anything wrong here is
    consent_required."""

    source: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_CONSENT_SOURCE_LENGTH,
            json_schema_extra={"pattern": _SOURCE_PATTERN},
        ),
        BeforeValidator(_consent_source),
    ]
    collected_at: Annotated[
        datetime,
        Field(description="ISO-8601 with a time zone offset"),
        BeforeValidator(_consent_instant),
    ]

    @model_validator(mode="before")
    @classmethod
    def _an_object_with_both_fields(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise PydanticCustomError(_CONSENT, "consent must be an object {source, collected_at}")
        for key in value:
            if key not in cls.model_fields:
                raise PydanticCustomError(_CONSENT, f"consent has an unknown field {key}")
        if value.get("source") is None or value.get("collected_at") is None:
            raise PydanticCustomError(_CONSENT, "consent needs both source and collected_at")
        return value


#: JSON Schema of "prefs.sms.enabled is true" and of "phone is a string", for the document to
#: state that a signup enabling SMS needs a phone (the service enforces it).
_SMS_ENABLED: JsonDict = {
    "required": ["prefs"],
    "properties": {
        "prefs": {
            "type": "object",
            "required": ["sms"],
            "properties": {
                "sms": {"required": ["enabled"], "properties": {"enabled": {"const": True}}}
            },
        }
    },
}
_PHONE_GIVEN: JsonDict = {"required": ["phone"], "properties": {"phone": {"type": "string"}}}


class SignupRequest(RequestBody):
    """`POST /subscribers`. With `prefs.sms.enabled` true, `phone` is required."""

    model_config = ConfigDict(json_schema_extra={"if": _SMS_ENABLED, "then": _PHONE_GIVEN})

    email: Email = Field(
        examples=["reader@example.org"],
        description="trimmed and lowercased; an ASCII local@domain.tld address (internationalised "
        "addresses are refused)",
    )
    consent: Consent | None = Field(
        default=None, description="creates an already confirmed subscriber"
    )
    prefs: PrefsChange | None = Field(default=None, description="omitted entries keep defaults")
    phone: Phone = Field(default=None, description="storing it does not enable SMS")
    first_name: Name = None
    last_name: Name = None
    zip: Zip = None
    categories: Categories = None


class ContactChange(RequestBody):
    """The contact fields a reader may change (the profile page): omitted fields are
    unchanged, null clears, prefs is merged."""

    read_only_extras = frozenset((*READ_ONLY_FIELDS, "status"))

    first_name: Name = None
    last_name: Name = None
    gender_self: Name = Field(default=None, description="kept only with gender self_described")
    zip: Zip = None
    phone: Phone = Field(
        default=None, description="clearing it ends SMS; prefs.sms.enabled needs one"
    )
    age_range: AgeRange = None
    gender: Gender = None
    categories: Categories = None
    prefs: Annotated[PrefsChange, field_rule(_kept_prefs)] = Field(
        default=_UNSENT, description="merged; cannot be cleared"
    )


class PatchRequest(ContactChange):
    """`PATCH /subscribers/{email}`: any subset of the contact's fields. Omitted fields are
    unchanged, null clears, prefs is merged. A contact from GET may be sent back: read-only
    fields are accepted with their current values. status accepts only unsubscribed, even when
    it is the current value."""

    read_only_extras = frozenset()

    status: Annotated[
        str, Field(json_schema_extra={"enum": ["unsubscribed"]}), field_rule(_unsubscribe_only)
    ] = Field(default=_UNSENT)
    email: Annotated[str, _echoed, _echo_note] = _UNSENT
    profile_completed_at: Annotated[Timestamp | None, _echoed_or_null, _echo_note] = _UNSENT
    created_at: Annotated[Timestamp, _echoed, _echo_note] = _UNSENT
    confirmed_at: Annotated[Timestamp | None, _echoed_or_null, _echo_note] = _UNSENT
    unsubscribed_at: Annotated[Timestamp | None, _echoed_or_null, _echo_note] = _UNSENT
    unsubscribe_url: Annotated[Url, _echoed, _echo_note] = _UNSENT
    profile_url: Annotated[Url, _echoed, _echo_note] = _UNSENT
    confirm_url: Annotated[Url | None, _echoed_or_null, _echo_note] = _UNSENT

    def echoes(self) -> dict[str, str | None]:
        """The read-only fields sent, with the values sent."""
        return {
            name: getattr(self, name) for name in READ_ONLY_FIELDS if name in self.model_fields_set
        }


# -- validation --------------------------------------------------------------------------------


def parse_request(model: type[Body], body: Any) -> Body:
    """``body`` validated as ``model`` (as it is when it already is one); raises
    :class:`InvalidRequest` naming the field (``body`` when not an object), or
    :class:`ConsentRequired` for anything wrong inside ``consent``."""
    if isinstance(body, model):
        return body
    try:
        return model.model_validate(dict(require_object(body)))
    except ValidationError as exc:
        raise _first_problem(model, exc.errors(include_url=False)) from None


def _first_problem(model: type[RequestBody], errors: list[ErrorDetails]) -> NewsletterError:
    """The error to report: at each nesting level, an unknown field first, then field order."""
    first_seen: dict[tuple[int | str, ...], int] = {}
    for index, error in enumerate(errors):
        for depth in range(1, len(error["loc"]) + 1):
            first_seen.setdefault(error["loc"][:depth], index)

    def order(error: ErrorDetails) -> list[tuple[bool, int]]:
        loc, unknown = error["loc"], error["type"] == "extra_forbidden"
        return [
            (not (unknown and depth == len(loc)), first_seen[loc[:depth]])
            for depth in range(1, len(loc) + 1)
        ]

    error = min(errors, key=order)
    path = ".".join(str(part) for part in error["loc"])
    kind = error["type"]
    if kind == _CONSENT:
        return ConsentRequired(error["msg"])
    if kind == _INVALID:
        message = error["msg"].replace(_FIELD, path)
    elif kind == "extra_forbidden":
        read_only = len(error["loc"]) == 1 and path in model.read_only_extras
        message = f"{path} is read-only" if read_only else f"unknown field {path}"
    elif kind == "missing":
        message = f"{path} is required"
    elif kind in ("model_type", "dict_type", "model_attributes_type"):
        message = f"{path} must be an object"
    else:
        message = f"{path} is not valid"
    return InvalidRequest(message, field=path)
