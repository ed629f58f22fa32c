"""The CSV export of subscribers: the contact's fields without its link tokens, one row per
subscriber, written lazily so a million rows stream without being held in memory."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

from ..model.contact import LINK_FIELDS
from ..storage.records import SubscriberRecord
from .subscribers import SubscriberService

#: The columns, in order: the contact's fields (docs/newsletter-api.md, "Sign up") with ``prefs``
#: flattened and the link fields (which carry tokens) left out.
CSV_COLUMNS = (
    "email",
    "first_name",
    "last_name",
    "zip",
    "phone",
    "status",
    "age_range",
    "gender",
    "gender_self",
    "categories",
    "prefs_email_briefings",
    "prefs_email_puzzles",
    "prefs_email_on_this_day",
    "prefs_email_local",
    "prefs_sms_enabled",
    "profile_completed_at",
    "created_at",
    "confirmed_at",
    "unsubscribed_at",
)
#: Columns a stranger fills with text a spreadsheet could read as a formula: the names and the
#: address (``=cmd|'/c calc'!a0@example.com`` is a valid one). A phone number cannot hold a
#: letter, so at most it reads as arithmetic, and stays exact.
_FREE_TEXT = frozenset({"email", "first_name", "last_name", "gender_self"})
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Where a spreadsheet may start a new cell inside ours: a comma or a semicolon (the list
#: separator of many locales, which splits a comma file's quoted cell on opening).
_CELL_BREAKS = (",", ";")


def spreadsheet_safe(text: str) -> str:
    """``text`` as a cell no spreadsheet reads as a formula, in a comma or a semicolon locale:
    a ``'`` before a formula start (``= + - @``, tab, carriage return) at its beginning or
    right after a ``,`` or ``;`` inside it. One pass, and ``text`` unchanged when it holds
    none."""
    if not text.startswith(_FORMULA_STARTS) and not any(b in text for b in _CELL_BREAKS):
        return text
    out = []
    starts_cell = True
    for char in text:
        if starts_cell and char in _FORMULA_STARTS:
            out.append("'")
        out.append(char)
        starts_cell = char in _CELL_BREAKS
    return "".join(out)


def csv_row(contact: dict[str, Any], columns: Iterable[str] = CSV_COLUMNS) -> list[str]:
    """The CSV cells of a contact in JSON values (as ``shown_contact`` returns it):
    ``categories`` joined by spaces, booleans ``true``/``false``, ``null`` empty, and an
    address or free-text cell made :func:`spreadsheet_safe`, so a spreadsheet shows it as
    text."""
    email_prefs = contact["prefs"]["email"]
    flat = {
        **{name: value for name, value in contact.items() if name not in LINK_FIELDS},
        "categories": " ".join(contact["categories"]),
        "prefs_email_briefings": email_prefs["briefings"],
        "prefs_email_puzzles": email_prefs["puzzles"],
        "prefs_email_on_this_day": email_prefs["onThisDay"],
        "prefs_email_local": email_prefs["local"],
        "prefs_sms_enabled": "true" if contact["prefs"]["sms"]["enabled"] else "false",
    }
    cells = []
    for column in columns:
        value = flat.get(column)
        text = "" if value is None else str(value)
        cells.append(spreadsheet_safe(text) if column in _FREE_TEXT else text)
    return cells


def csv_chunks(
    subscribers: SubscriberService,
    records: Iterable[SubscriberRecord],
    rows_per_chunk: int = 200,
    columns: tuple[str, ...] = CSV_COLUMNS,
) -> Iterator[bytes]:
    """The UTF-8 CSV of ``records`` (``columns`` of :data:`CSV_COLUMNS`, in their order): the
    header line alone (before any record is read), then rows in chunks of ``rows_per_chunk``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    yield buffer.getvalue().encode("utf-8")
    buffer.seek(0)
    buffer.truncate()
    pending = 0
    for record in records:
        writer.writerow(csv_row(subscribers.shown_contact(record), columns))
        pending += 1
        if pending == rows_per_chunk:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
            pending = 0
    if pending:
        yield buffer.getvalue().encode("utf-8")


def confirmed_csv(subscribers: SubscriberService) -> Iterator[bytes]:
    """The CSV of every confirmed subscriber, in creation order, streamed page by page."""
    return csv_chunks(subscribers, subscribers.walk("confirmed"))
