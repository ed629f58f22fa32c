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


def csv_row(contact: dict[str, Any], columns: Iterable[str] = CSV_COLUMNS) -> list[str]:
    """The CSV cells of a contact in JSON values (as ``shown_contact`` returns it):
    ``categories`` joined by spaces, booleans ``true``/``false``, ``null`` empty, and an
    address or free-text cell starting like a formula prefixed with ``'`` so a spreadsheet shows
    it as text."""
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
        if column in _FREE_TEXT and text.startswith(_FORMULA_STARTS):
            text = "'" + text
        cells.append(text)
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
