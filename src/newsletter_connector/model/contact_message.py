"""The contact message representation (SPEC 2.3): the one serializer for the API and events."""

from __future__ import annotations

from typing import Any

from ..storage import ContactMessageRecord
from ..timeutil import isoformat_z

MAX_MESSAGE_LENGTH = 10_000


def contact_message_payload(record: ContactMessageRecord) -> dict[str, Any]:
    """``{id, email, name, message, submitted_at}``; ``id`` is a string."""
    return {
        "id": str(record.id),
        "email": record.email,
        "name": record.name,
        "message": record.message,
        "submitted_at": isoformat_z(record.submitted_at),
    }
