"""The contact-message log (docs/newsletter-api.md, "Contact messages"): ``service.messages``.

Each message is its own row and queues a ``contact.message`` event keyed to the sender's
address, so erasing the address deletes both. A message never touches a subscriber's consent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidRequest, NotFound
from ..model.contact import check_encodable, normalise_email, optional_text
from ..model.contact_message import MAX_MESSAGE_LENGTH, contact_message_payload
from ..storage.access_records import MessageHandlingRecord
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
        self, cursor: str | None = None, limit: int = DEFAULT_LIMIT, *, unhandled: bool = False
    ) -> Page[ContactMessageRecord]:
        """One page of the log newest first (the admin's reading order); ``next_cursor`` walks
        on to older messages. With ``unhandled``, only the messages no admin marked handled
        (a cursor of one view is refused by the other). :class:`InvalidRequest` names a bad
        ``cursor`` or ``limit``."""
        check_limit(limit)
        kind = "contact-messages-unhandled" if unhandled else "contact-messages-newest"
        before_id = decode_cursor(cursor, kind)
        with self.context.storage.transaction(write=False) as uow:
            if unhandled:
                rows = uow.message_handling.unhandled_page_desc(
                    before_id=before_id, limit=limit + 1
                )
            else:
                rows = uow.messages.list_page_desc(before_id=before_id, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = encode_cursor(kind, rows[-1].id) if more else None
        return Page(items=rows, next_cursor=next_cursor)

    def handling_of(
        self, records: Sequence[ContactMessageRecord]
    ) -> dict[int, MessageHandlingRecord]:
        """The handled marks of ``records`` that have one, by message id."""
        with self.context.storage.transaction(write=False) as uow:
            return uow.message_handling.of([record.id for record in records])

    def mark_handled(self, message_id: int, *, by: str) -> MessageHandlingRecord:
        """Mark a message handled by the admin ``by``, now; a message already marked keeps
        its first mark. The message itself never changes.

        :raises NotFound: no such message (or its sender's address was erased).
        """
        with self.context.storage.transaction() as uow:
            mark = uow.message_handling.mark(message_id, by=by, at=self.context.clock())
        if mark is None:
            raise NotFound(f"no contact message {message_id}")
        return mark

    def mark_unhandled(self, message_id: int) -> bool:
        """Take a message's handled mark away; whether it had one."""
        with self.context.storage.transaction() as uow:
            return uow.message_handling.clear(message_id)
