"""The contact message representation (docs/newsletter-api.md, "Contact messages"): the one
serializer for the API and events."""

from __future__ import annotations

from typing import Any

from ..storage.records import ContactMessageRecord
from ..timeutil import to_naive_utc

MAX_MESSAGE_LENGTH = 10_000


def contact_message_payload(record: ContactMessageRecord) -> dict[str, Any]:
    """``{id, email, name, message, submitted_at}``; ``id`` is a string, ``submitted_at`` a
    naive UTC datetime (``json_encoding`` writes it)."""
    return {
        "id": str(record.id),
        "email": record.email,
        "name": record.name,
        "message": record.message,
        "submitted_at": to_naive_utc(record.submitted_at),
    }
