"""One line of a subscriber file as the request it stands for (docs/importing.md): the body of a
``POST /subscribers`` (mode ``add``) or of a contact change (mode ``update``), validated by the
same models and rules as those requests, or a :class:`Refusal` naming the line, the field and
the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ...errors import ConsentRequired, InvalidRequest
from ...model.requests import ContactChange, SignupRequest, parse_request
from ...timeutil import isoformat_z, to_naive_utc
from ._columns import ColumnMap
from ._files import listed_address
from ._lines import Record

#: What the source says of a reader who left it: ``unsubscribe`` (opted out, blocklisted) or
#: ``bounce`` (cleaned: the address bounced).
OptOut = Literal["unsubscribe", "bounce"]
#: A source's statuses (a status column, Mailchimp's unsubscribe and clean times) that mean
#: the reader left, and how the import applies them.
_OPT_OUTS: dict[str, OptOut] = {
    "blocklisted": "unsubscribe",
    "unsubscribed": "unsubscribe",
    "cleaned": "bounce",
    "bounced": "bounce",
}
#: Statuses that say nothing against mailing: the signup's consent rules still decide.
_MAILABLE_STATUSES = frozenset(("", "enabled", "subscribed", "confirmed", "pending"))
_FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
#: Fields an ``attributes`` object (listmonk) may carry, read as the columns of those names.
ATTRIBUTE_FIELDS = (
    "first_name",
    "last_name",
    "zip",
    "phone",
    "categories",
    "age_range",
    "gender",
    "gender_self",
)
#: Fields of the contact a signup body has no place for: applied as a contact change.
_EXTRA_FIELDS = ("age_range", "gender", "gender_self")
#: Timestamps of Mailchimp's exports: UTC, without an offset.
_SOURCE_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


@dataclass(frozen=True)
class Provenance:
    """One consent provenance for every line without its own (given as options)."""

    source: str | None = None
    collected_at: str | None = None


@dataclass(frozen=True)
class ImportRow:
    """A line read: its address (normalised), the signup it stands for (with its consent, if
    any; ``None`` in mode ``update``), the contact change (the fields a signup has no place for,
    ``None`` when the line gives none, or in mode ``update`` every field given), and whether
    the source says the reader left."""

    line: int
    email: str
    signup: SignupRequest | None
    change: ContactChange | None
    opted_out: OptOut | None


@dataclass(frozen=True)
class Refusal:
    """A line not imported: its number, the field at fault (``None``: the line as a whole)
    and why, in words."""

    line: int
    field: str | None
    reason: str


@dataclass
class RowReader:
    """Reads the records of one file under one column map."""

    columns: ColumnMap
    mode: str
    provenance: Provenance
    #: ``attributes`` keys seen and not imported (at most 20 names kept).
    unread_attributes: set[str]

    def read(self, record: Record) -> ImportRow | Refusal:
        """The row ``record`` stands for, or why it is refused."""
        try:
            return self._read(record)
        except ConsentRequired as exc:
            return Refusal(record.line, "consent", exc.message)
        except InvalidRequest as exc:
            return Refusal(record.line, exc.field, exc.message)

    def _read(self, record: Record) -> ImportRow:
        values = self._values(record)
        status = _source_status(values)
        body = _contact_body(values)
        email = body.pop("email", None)
        if email is None:
            raise InvalidRequest("email is required", field="email")
        if self.mode == "suppress" or status in _OPT_OUTS:
            # An opt-out needs only the address: no other cell can keep it from being applied.
            opted_out: OptOut | None = _OPT_OUTS.get(status, "unsubscribe")
            return ImportRow(record.line, _valid_email(email), None, None, opted_out)
        if self.mode == "update":
            change = parse_request(ContactChange, body)
            return ImportRow(record.line, _valid_email(email), None, change, None)
        if status == "disabled":
            raise InvalidRequest(
                "the source disabled this reader: not added (add them by hand if they should be "
                "mailed)",
                field="status",
            )
        extras = {name: body.pop(name) for name in _EXTRA_FIELDS if name in body}
        consent = self._consent(values)
        if consent is not None:
            body["consent"] = consent
        signup = parse_request(SignupRequest, {"email": email, **body})
        return ImportRow(
            line=record.line,
            email=signup.email,
            signup=signup,
            change=parse_request(ContactChange, extras) if extras else None,
            opted_out=None,
        )

    def _values(self, record: Record) -> dict[str, str]:
        if self.columns.source == "plain":
            listed = listed_address(record.fields[0])
            if listed is None:
                raise InvalidRequest("the line is not an address or Name <address>", field="email")
            email, name = listed
            values = {"email": email}
            if name:
                values["name"] = name
                _split_name(values)
            return values
        width = len(self.columns.header)
        if len(record.fields) != width:
            raise InvalidRequest(
                f"the line has {len(record.fields)} fields; the first line has {width}",
                field=None,
            )
        values = self.columns.values(record.fields)
        if "attributes" in values:
            self._merge_attributes(values)
        if "name" in values:
            _split_name(values)
        return values

    def _merge_attributes(self, values: dict[str, str]) -> None:
        try:
            attributes = json.loads(values.pop("attributes"))
        except ValueError:
            raise InvalidRequest("attributes is not a JSON object", field="attributes") from None
        if not isinstance(attributes, dict):
            raise InvalidRequest("attributes is not a JSON object", field="attributes")
        for key, value in attributes.items():
            if key not in ATTRIBUTE_FIELDS:
                if len(self.unread_attributes) < 20:
                    self.unread_attributes.add(str(key)[:40])
                continue
            if key in values or value is None:
                continue  # a column of its own wins
            if isinstance(value, list):
                value = ";".join(str(item) for item in value)
            values[key] = str(value)

    def _consent(self, values: dict[str, str]) -> dict[str, str] | None:
        """The line's consent: its own columns, else the file's provenance, field by field."""
        source = values.get("consent_source") or self.provenance.source
        collected = values.get("consent_collected_at") or _source_time(
            values.get("confirmed_time") or values.get("optin_time")
        )
        collected = collected or self.provenance.collected_at
        if source is None and collected is None:
            return None
        return {"source": source, "collected_at": collected}  # type: ignore[dict-item]


def _valid_email(value: str) -> str:
    return parse_request(SignupRequest, {"email": value}).email


def _source_status(values: dict[str, str]) -> str:
    """What the source says of the reader: a key of :data:`_OPT_OUTS` (the source's opt-out),
    ``disabled``, or ``""`` (mailable as far as the source knows).

    :raises InvalidRequest: naming ``status`` for a value no source is known to use.
    """
    if "cleaned_time" in values:
        return "cleaned"
    if "unsubscribed_time" in values:
        return "unsubscribed"
    status = values.get("source_status", "").strip().lower()
    if status in _OPT_OUTS or status == "disabled":
        return status
    if status in _MAILABLE_STATUSES:
        return ""
    raise InvalidRequest(
        f"status {status[:40]!r} is not one this import knows: "
        f"{', '.join(sorted((*_OPT_OUTS, 'disabled', *filter(None, _MAILABLE_STATUSES))))}",
        field="status",
    )


def _split_name(values: dict[str, str]) -> None:
    """A whole name's first word as ``first_name``, the rest as ``last_name`` (``Last,
    First`` the other way round), unless the line has columns of their own."""
    name = values.pop("name")
    if "," in name:
        last, _, first = name.partition(",")
        name = f"{first.strip()} {last.strip()}"
    parts = name.split(None, 1)
    if "first_name" not in values and "last_name" not in values and parts:
        values["first_name"] = parts[0]
        if len(parts) > 1:
            values["last_name"] = parts[1]


def _source_time(value: str | None) -> str | None:
    """A source's UTC time without an offset as ISO-8601 UTC; anything else as it is (the
    consent rules then refuse it)."""
    if value is None:
        return None
    try:
        parsed = datetime.strptime(value.strip(), _SOURCE_TIME_FORMAT)
    except ValueError:
        return value
    return isoformat_z(to_naive_utc(parsed))


def _contact_body(values: dict[str, str]) -> dict[str, Any]:
    """The request body of a line's API fields: ``prefs`` nested, ``categories`` split at
    ``;``, ``prefs.sms.enabled`` as true or false."""
    body: dict[str, Any] = {}
    prefs: dict[str, dict[str, Any]] = {}
    for name, value in values.items():
        if name.startswith("prefs."):
            _, channel, key = name.split(".")
            prefs.setdefault(channel, {})[key] = _flag(value, name) if channel == "sms" else value
        elif name == "categories":
            body[name] = [part for part in value.split(";") if part.strip()]
        elif name in ATTRIBUTE_FIELDS or name == "email":
            body[name] = value
    if prefs:
        body["prefs"] = prefs
    return body


def _flag(value: str, field: str) -> bool:
    flag = _FLAGS.get(value.strip().lower())
    if flag is None:
        raise InvalidRequest(f"{field} must be true or false (or yes/no, 1/0)", field=field)
    return flag
