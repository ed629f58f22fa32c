"""The records of the outbox: events queued, frozen into batches, leased and counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from ..json_encoding import dumps_text, loads

__all__ = [
    "ClaimedBatch",
    "NewEvent",
    "OutboxBatchRecord",
    "OutboxEvent",
    "OutboxStatus",
    "SubscriberEventRecord",
]


@dataclass(frozen=True, eq=False)
class OutboxEvent:
    """One queued event as the runner hands it to a transport. ``event_id`` never changes.

    ``payload_json`` is the payload, a JSON object, as text: a transport sending it unchanged
    splices it into its body; :attr:`payload` decodes it once, when first read. ``repr`` shows
    neither (a payload may carry a contact's data). Equal events have equal decoded payloads."""

    seq: int
    event_id: str
    event_type: str
    occurred_at: datetime
    payload_json: str = field(repr=False)

    @classmethod
    def with_payload(
        cls,
        seq: int,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
    ) -> OutboxEvent:
        """The event of an already decoded ``payload``."""
        text = dumps_text(payload)
        event = cls(seq, event_id, event_type, occurred_at, text)
        event.__dict__["payload"] = payload  # what the cached property would decode
        return event

    @cached_property
    def payload(self) -> dict[str, Any]:
        payload = loads(self.payload_json)
        if not isinstance(payload, dict):
            raise ValueError(f"the payload of event {self.event_id} is not a JSON object")
        return payload

    def _compared(self) -> tuple[Any, ...]:
        return (self.seq, self.event_id, self.event_type, self.occurred_at, self.payload)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutboxEvent):
            return NotImplemented
        return self._compared() == other._compared()

    __hash__ = None  # type: ignore[assignment]  # equality reads the payload, a dict


@dataclass(frozen=True)
class NewEvent:
    """One event to queue; its fields are :meth:`OutboxRepository.enqueue`'s keywords.
    ``subscriber_key`` is the keyed hash of the address the payload carries, or ``None``."""

    event_id: str
    event_type: str
    occurred_at: datetime
    payload: dict[str, Any] = field(repr=False)  # it may carry a contact's data
    subscriber_key: str | None
    created_at: datetime


@dataclass(frozen=True)
class ClaimedBatch:
    """A frozen batch leased to one runner until ``lease_until``; ``attempts`` counts the
    attempt this claim starts (1 on the first try)."""

    id: str
    attempts: int
    lease_until: datetime
    events: Sequence[OutboxEvent]


@dataclass(frozen=True)
class OutboxBatchRecord:
    """A batch as the operator tools show it (no payloads)."""

    id: str
    state: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    settled_at: datetime | None
    event_count: int


@dataclass(frozen=True)
class SubscriberEventRecord:
    """An event about one subscriber as the admin shows it (no payload): what it was, when it
    was queued, and its batch's ``state`` (``None``: not in a batch yet), ``attempts`` and
    ``settled_at`` (when delivered or failed for good)."""

    event_type: str
    occurred_at: datetime
    state: str | None
    attempts: int
    settled_at: datetime | None


@dataclass(frozen=True)
class OutboxStatus:
    """The figures of ``outbox status`` and the Prometheus metrics: batches by state (every
    state, zero when none), queued events not yet in a batch, the ``occurred_at`` of the oldest
    event neither delivered nor failed, and the newest error of a pending or failed batch."""

    batches: dict[str, int]
    unbatched: int
    undelivered_events: int
    failed_events: int
    oldest_pending_at: datetime | None
    last_error: str | None
    #: Pending batches that failed at least once and wait for their next attempt.
    waiting_retry: int = 0
    #: When the most recent delivered batch was accepted.
    last_delivered_at: datetime | None = None
