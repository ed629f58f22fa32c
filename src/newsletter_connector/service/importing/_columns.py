"""Which column of a subscriber file holds what (docs/importing.md, "Columns"): the API's field
names, the columns of a listmonk subscriber export and of a Mailchimp audience export matched
by name (any letter case), or a plain list of one address per line. A column matched by none
of them is reported as not imported, never guessed; the operator may name what a column holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...errors import InvalidRequest

#: The API's field names a column may carry, as the import takes them.
API_FIELDS = (
    "email",
    "first_name",
    "last_name",
    "zip",
    "phone",
    "categories",
    "prefs.email.briefings",
    "prefs.email.puzzles",
    "prefs.email.onThisDay",
    "prefs.email.local",
    "prefs.sms.enabled",
    "age_range",
    "gender",
    "gender_self",
    "consent_source",
    "consent_collected_at",
)
#: What a source's own column carries beyond the API's fields: ``name`` (a whole name, its
#: first word the first name), ``attributes`` (a JSON object of fields), ``source_status``
#: (listmonk's subscriber status), ``confirmed_time`` and ``optin_time`` (when consent was
#: given, UTC without an offset), ``unsubscribed_time`` and ``cleaned_time`` (when the source
#: saw the reader opt out, or the address bounce).
SOURCE_FIELDS = (
    "name",
    "attributes",
    "source_status",
    "confirmed_time",
    "optin_time",
    "unsubscribed_time",
    "cleaned_time",
)
TARGETS = API_FIELDS + SOURCE_FIELDS
#: The source's fields that say a reader opted out or bounced (listmonk's status, Mailchimp's
#: unsubscribe and clean times): a column of them not imported imports those readers as
#: subscribed.
OPT_OUT_FIELDS = ("source_status", "unsubscribed_time", "cleaned_time")

#: listmonk's subscriber export (``GET /api/subscribers/export``).
LISTMONK_COLUMNS = {
    "name": "name",
    "attributes": "attributes",
    "attribs": "attributes",
    "status": "source_status",
}
#: Mailchimp's audience export (subscribed, unsubscribed and cleaned files).
MAILCHIMP_COLUMNS = {
    "email address": "email",
    "first name": "first_name",
    "last name": "last_name",
    "phone number": "phone",
    "confirm_time": "confirmed_time",
    "optin_time": "optin_time",
    "unsub_time": "unsubscribed_time",
    "clean_time": "cleaned_time",
}
_BY_NAME = {name.lower(): name for name in API_FIELDS} | LISTMONK_COLUMNS | MAILCHIMP_COLUMNS
_LISTMONK_MARKS = frozenset(("uuid", "attributes", "attribs"))
_MAILCHIMP_MARKS = frozenset(("email address", "leid", "euid", "member_rating"))

SOURCE_LABELS = {
    "api": "columns named as the API's fields",
    "listmonk": "a listmonk subscriber export",
    "mailchimp": "a Mailchimp audience export",
    "plain": "a plain list, one address per line",
}


@dataclass(frozen=True)
class ColumnMap:
    """Where each field is read from: ``targets[i]`` is what column ``i`` holds (``None``:
    not imported); ``header`` is the file's first line (empty for a plain list, which has
    none), ``source`` which kind of file it is (a key of :data:`SOURCE_LABELS`)."""

    source: str
    header: tuple[str, ...]
    targets: tuple[str | None, ...]

    @property
    def not_imported(self) -> tuple[str, ...]:
        """The columns nothing is read from, as the header names them."""
        return tuple(
            name for name, target in zip(self.header, self.targets, strict=True) if target is None
        )

    @property
    def mapped(self) -> tuple[tuple[str, str], ...]:
        """``(column, field)`` of every column read."""
        return tuple(
            (name, target)
            for name, target in zip(self.header, self.targets, strict=True)
            if target is not None
        )

    def values(self, fields: list[str]) -> dict[str, str]:
        """The non-blank values of a record's ``fields``, by what they hold."""
        found: dict[str, str] = {}
        for target, value in zip(self.targets, fields, strict=False):
            if target is not None and value.strip():
                found[target] = value
        return found


def plain_list() -> ColumnMap:
    """The map of a plain list: each line an address, ``Name <address>`` or bare."""
    return ColumnMap(source="plain", header=(), targets=())


def header_names_fields(header: tuple[str, ...]) -> bool:
    """Whether any of ``header``'s names is one a column is matched by."""
    return any(_key(name) in _BY_NAME for name in header)


def suggested_targets(header: tuple[str, ...]) -> tuple[str | None, ...]:
    """What each column of ``header`` holds by its name alone (``None``: nothing known)."""
    return tuple(_BY_NAME.get(_key(name)) for name in header)


def map_columns(header: tuple[str, ...], chosen: Mapping[str, str] | None = None) -> ColumnMap:
    """The map of a file whose first line is ``header``: each column matched by name, unless
    ``chosen`` says what it holds (a field of :data:`TARGETS`, or ``""`` for nothing).

    :raises InvalidRequest: naming ``columns`` for a chosen column the header lacks, a
        field that is not one of :data:`TARGETS`, a field two columns hold, or no column
        holding ``email``.
    """
    chosen = dict(chosen or {})
    keys = [_key(name) for name in header]
    by_key = {_key(name): target for name, target in chosen.items()}
    for name, target in chosen.items():
        if _key(name) not in keys:
            raise InvalidRequest(f"the file has no column {name!r}", field="columns")
        if target and target not in TARGETS:
            raise InvalidRequest(
                f"{target!r} is not a field an import takes; one of: {', '.join(TARGETS)}",
                field="columns",
            )
    targets: list[str | None] = []
    for key in keys:
        targets.append((by_key[key] if key in by_key else _BY_NAME.get(key)) or None)
    seen: set[str] = set()
    for name, held in zip(header, targets, strict=True):
        if held is None:
            continue
        if held in seen:
            raise InvalidRequest(
                f"two columns hold {held} (one is {name!r}); say which one "
                "holds it and set the other to nothing",
                field="columns",
            )
        seen.add(held)
    if "email" not in seen:
        raise InvalidRequest(
            "no column holds the email address; name it (columns found: "
            f"{', '.join(repr(name) for name in header[:20])})",
            field="columns",
        )
    return ColumnMap(source=_source_of(keys), header=header, targets=tuple(targets))


def opt_out_columns(header: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of ``header`` that, by their names, mark readers who opted out or bounced."""
    return tuple(
        name
        for name, target in zip(header, suggested_targets(header), strict=True)
        if target in OPT_OUT_FIELDS
    )


def dropped_opt_outs(columns: ColumnMap) -> tuple[str, ...]:
    """The columns marking opt-outs by their names that ``columns`` does not read as such."""
    marking = opt_out_columns(columns.header)
    return tuple(
        name
        for name, target in zip(columns.header, columns.targets, strict=True)
        if name in marking and target not in OPT_OUT_FIELDS
    )


def _key(name: str) -> str:
    return name.strip().lstrip("\ufeff").strip().lower()


def _source_of(keys: list[str]) -> str:
    present = set(keys)
    if present & _MAILCHIMP_MARKS:
        return "mailchimp"
    if present & _LISTMONK_MARKS:
        return "listmonk"
    return "api"
