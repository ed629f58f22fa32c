"""The outbox repositories: events written in the same transaction as the change that caused
them, then claimed, delivered and settled by the sync runner. Always the built-in tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from .outbox_records import (
    ClaimedBatch,
    NewEvent,
    OutboxBatchRecord,
    OutboxStatus,
    SubscriberEventRecord,
)


class OutboxDeliveryRepository(Protocol):
    """What the sync runner needs from the outbox (part of :class:`OutboxRepository`). The
    settle methods act only on a batch still sending and, given the claim's ``lease_until``,
    only while that claim holds (so no runner settles an attempt of another)."""

    def claim_batches(
        self, *, now: datetime, lease_until: datetime, batch_size: int, max_batches: int
    ) -> list[ClaimedBatch]:
        """Lease up to ``max_batches`` batches until ``lease_until`` (which must cover sending
        all of them, one after the other), in sending order: first the due pending batches
        (``next_attempt_at <= now``), oldest first; then, while there is room, the oldest
        queued events frozen into new batches of at most ``batch_size`` (whose members never
        change). Each is sending with ``attempts + 1``. Concurrent callers never claim the same
        batch or freeze the same event. Events come oldest first; a batch emptied by erasure
        has none. ``[]`` when nothing is due or queued."""

    def release_claims(self, batch_ids: Sequence[str], *, lease_until: datetime) -> int:
        """Return unsent batches still sending under the claim ``lease_until`` to pending as if
        never claimed (``attempts - 1``, due time unchanged); how many."""

    def settle_delivered(
        self, batch_ids: Sequence[str], *, at: datetime, lease_until: datetime | None = None
    ) -> int:
        """Mark sending batches delivered (clearing their error); how many."""

    def schedule_retry(
        self,
        batch_id: str,
        *,
        error: str,
        next_attempt_at: datetime,
        lease_until: datetime | None = None,
    ) -> bool:
        """Return a sending batch to pending, due at ``next_attempt_at``, keeping ``error``."""

    def mark_failed(
        self, batch_id: str, *, error: str, at: datetime, lease_until: datetime | None = None
    ) -> bool:
        """Give up on a sending batch: failed, kept with ``error`` for the operator."""

    def release_expired_leases(self, *, now: datetime) -> int:
        """Return sending batches whose lease ended before ``now`` to pending, due now."""

    def prune_delivered(self, *, settled_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` batches delivered before ``settled_before``, with their
        events; how many."""

    def status(self) -> OutboxStatus:
        """Counts for the operator tools (set-based; never loads rows)."""

    def failed_batches(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[OutboxBatchRecord]:
        """Failed batches ordered by id, strictly after the id ``after`` (keyset paging)."""

    def get_batch(self, batch_id: str) -> OutboxBatchRecord | None:
        """One batch, or ``None``."""

    def replay_failed(self, batch_id: str | None, *, at: datetime) -> int:
        """Give one failed batch (``None``: every one) a fresh ladder: pending, attempts 0,
        due at ``at``; how many."""

    def retry_waiting_now(self, *, now: datetime) -> int:
        """Make every batch waiting for its next attempt (pending, failed at least once, due
        after ``now``) due at ``now``, in one statement; attempts are kept, so the retry ladder
        continues from its rung. Failed, delivered, sending and never-tried batches are left
        alone. How many."""


class OutboxRepository(OutboxDeliveryRepository, Protocol):
    """Outbound events, written in the same transaction as the change that caused them."""

    def enqueue(
        self,
        *,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
        subscriber_key: str | None,
        created_at: datetime,
    ) -> None:
        """Queue one event (in no batch yet); ``subscriber_key`` as in :class:`NewEvent`."""

    def enqueue_many(self, events: Sequence[NewEvent]) -> None:
        """Queue ``events`` in order, as :meth:`enqueue` one after another would (an import's
        chunk queues hundreds at once)."""

    def discard_for_subscriber(self, subscriber_key: str) -> int:
        """Erase every stored event carrying this subscriber's address, delivered or not; how
        many of them were still undelivered."""

    def events_about(self, subscriber_key: str, *, limit: int) -> list[SubscriberEventRecord]:
        """The newest ``limit`` stored events carrying this subscriber's address, newest
        first, each with its batch's delivery state (pruned delivered events are gone). One
        index range read, and one index look-up on ``last_seq`` per event."""

    def events_by_id(self, event_ids: Sequence[str]) -> dict[str, SubscriberEventRecord]:
        """The stored events of ``event_ids`` (at most a page's worth), by id, each with its
        batch's delivery state; an id whose event is gone (delivered and pruned) is left out.
        One look-up of the unique event id index, and one on ``last_seq``, per event."""
