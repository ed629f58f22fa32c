"""What the connected platform reports back: bounces, complaints and unsubscribes.

``POST {base_url}/api/export/feedback`` hands its body to :meth:`FeedbackService.apply`. Each
item is applied once (its id is stored in the same unit of work), the whole batch in one unit
of work, after the whole body has been validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.contact import normalise_email
from ..model.feedback import FeedbackItem, parse_feedback
from ..plugins.sql_store.store import SqlUnitOfWork
from ..storage.records import FeedbackRecord, SuppressionRecord
from .context import ServiceContext
from .events import subscriber_key
from .subscribers import STATUS_AFTER, SubscriberService

#: A suppression's kind in words ("suppressed after ...").
SUPPRESSION_WORDS = {
    "bounce": "a bounce",
    "complaint": "a complaint",
    "unsubscribe": "an unsubscribe",
}
#: Statuses a report moves; bounced and unsubscribed subscribers stay as they are.
_MAILABLE_OR_PENDING = ("pending", "confirmed")


@dataclass(frozen=True)
class FeedbackOutcome:
    """What applying one item did: ``bounced`` or ``unsubscribed`` (the subscriber moved and
    its event was queued), ``unchanged`` (already bounced or unsubscribed), ``suppressed`` (no
    subscriber has the address; a suppression keeps it from being imported as mailable) or
    ``duplicate`` (an item with this id was applied before; nothing was done)."""

    id: str
    outcome: str


@dataclass(frozen=True)
class AddressFeedback:
    """What the platform reported about one address: its items, oldest first, and its
    suppression, if no subscriber had the address when it was reported."""

    items: list[FeedbackRecord]
    suppression: SuppressionRecord | None


class FeedbackService:
    """``service.feedback``."""

    def __init__(self, context: ServiceContext, subscribers: SubscriberService) -> None:
        self.context = context
        self.subscribers = subscribers

    def apply(self, body: Any) -> list[FeedbackOutcome]:
        """Apply a feedback batch (the endpoint's JSON body, or parsed items), in order.

        :raises InvalidRequest: naming the item and field; then nothing is applied.
        """
        items = parse_feedback(body)
        now = self.context.clock()
        outcomes = []
        with self.context.storage.transaction() as uow:
            for item in items:
                key = subscriber_key(self.context, item.email)
                claimed = uow.feedback.claim(
                    FeedbackRecord(
                        id=item.id,
                        kind=item.type,
                        email_hmac=key,
                        reason=item.reason,
                        occurred_at=item.occurred_at,
                        received_at=now,
                        outcome="unchanged",
                    )
                )
                if not claimed:
                    outcomes.append(FeedbackOutcome(item.id, "duplicate"))
                    continue
                outcome = self._apply_one(uow, item, key)
                if outcome != "unchanged":
                    uow.feedback.set_outcome(item.id, outcome)
                outcomes.append(FeedbackOutcome(item.id, outcome))
        return outcomes

    def _apply_one(self, uow: SqlUnitOfWork, item: FeedbackItem, key: str) -> str:
        record = uow.subscribers.get_by_email(item.email, lock=True)
        if record is None:
            uow.feedback.suppress(
                email_hmac=key,
                kind=item.type,
                occurred_at=item.occurred_at,
                at=self.context.clock(),
            )
            return "suppressed"
        if record.status not in _MAILABLE_OR_PENDING:
            return "unchanged"
        status = STATUS_AFTER[item.type]
        self.subscribers.set_status(uow, record, status)
        return status

    def about(self, email: str) -> AddressFeedback:
        """The platform's reports about ``email`` and its suppression (:class:`InvalidRequest`
        for a bad address)."""
        key = subscriber_key(self.context, normalise_email(email))
        with self.context.storage.transaction(write=False) as uow:
            return AddressFeedback(uow.feedback.history(key), uow.feedback.suppression(key))
