"""The contact-message log (docs/newsletter-api.md, "Contact messages"): ``service.messages``.

Each message is its own row and queues a ``contact.message`` event keyed to the sender's
address, so erasing the address deletes both. A message never touches a subscriber's consent.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidRequest
from ..model.contact import check_encodable, normalise_email, optional_text
from ..model.contact_message import MAX_MESSAGE_LENGTH, contact_message_payload
from ..storage.records import ContactMessageRecord
from .context import ServiceContext
from .cursors import DEFAULT_LIMIT, Page, check_limit, decode_cursor, encode_cursor
from .events import queue_event


class ContactMessageService:
    """``service.messages``."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    def payload(self, record: ContactMessageRecord) -> dict[str, Any]:
        """The wire contact message (docs/newsletter-api.md, "Contact messages"); identical to the
        event payload."""
        return contact_message_payload(record)

    def record(self, email: str, name: str | None, message: str) -> ContactMessageRecord:
        """Store a contact-form message and queue its ``contact.message`` event;
        :class:`InvalidRequest` names a bad ``email``, ``name`` or ``message``."""
        address = normalise_email(email)
        sender = optional_text(name, "name")
        if not isinstance(message, str) or not message.strip():
            raise InvalidRequest("message must not be blank", field="message")
        text = message.strip()
        if "\x00" in text:
            raise InvalidRequest("message must not contain NUL characters", field="message")
        check_encodable(text, "message")
        if len(text) > MAX_MESSAGE_LENGTH:
            raise InvalidRequest(
                f"message must be at most {MAX_MESSAGE_LENGTH} characters", field="message"
            )
        with self.context.storage.transaction() as uow:
            record = uow.messages.add(
                email=address, name=sender, message=text, submitted_at=self.context.clock()
            )
            queue_event(
                uow, self.context, "contact.message", self.payload(record), subscriber_email=address
            )
        return record

    def list_page(
        self, cursor: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> Page[ContactMessageRecord]:
        """One page of the log in arrival order; :class:`InvalidRequest` names a bad
        ``cursor`` or ``limit``."""
        check_limit(limit)
        after_id = decode_cursor(cursor, "contact-messages")
        with self.context.storage.transaction(write=False) as uow:
            rows = uow.messages.list_page(after_id=after_id, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor("contact-messages", rows[-1].id) if more else None
        return Page(items=rows, next_cursor=next_cursor)

    def newest_page(
        self, cursor: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> Page[ContactMessageRecord]:
        """One page of the log newest first (the admin's reading order); ``next_cursor`` walks
        on to older messages. :class:`InvalidRequest` names a bad ``cursor`` or ``limit``."""
        check_limit(limit)
        before_id = decode_cursor(cursor, "contact-messages-newest")
        with self.context.storage.transaction(write=False) as uow:
            rows = uow.messages.list_page_desc(before_id=before_id, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor("contact-messages-newest", rows[-1].id) if more else None
        return Page(items=rows, next_cursor=next_cursor)
