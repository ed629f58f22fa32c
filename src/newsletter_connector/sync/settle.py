"""Recording what became of sent batches (the runner's settle step), in the caller's
transaction: 2xx → delivered; else the next rung of the ladder (:mod:`.schedule`), or failed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from ..plugins.sql_store.outbox import SqlOutbox
from ..storage.outbox_records import ClaimedBatch
from .schedule import MAX_ATTEMPTS, next_attempt_at

log = logging.getLogger("newsletter_connector.sync.runner")


@dataclass(frozen=True)
class BatchOutcome:
    """What happened to one batch: ``delivered``, ``retry`` or ``failed``."""

    batch_id: str
    result: str
    events: int
    attempts: int
    error: str | None = None
    next_attempt_at: datetime | None = None


@dataclass(frozen=True)
class SentBatch:
    """A claimed batch after its send: ``error`` is ``None`` when the platform accepted it."""

    batch: ClaimedBatch
    error: str | None


def settle(outbox: SqlOutbox, sent: list[SentBatch], *, now: datetime) -> list[BatchOutcome]:
    """Record every sent batch's result as of ``now``; one outcome per batch, in order. A batch
    whose lease has ended is left alone (its outcome still reported)."""
    outcomes: list[BatchOutcome] = []
    delivered: dict[datetime, list[str]] = {}  # by claim (each claim has its own lease)
    for item in sent:
        batch, error = item.batch, item.error
        size = len(batch.events)
        if error is None:
            delivered.setdefault(batch.lease_until, []).append(batch.id)
            outcomes.append(BatchOutcome(batch.id, "delivered", size, batch.attempts))
            continue
        retry_at = next_attempt_at(batch.attempts, now)
        if retry_at is None:
            outbox.mark_failed(batch.id, error=error, at=now, lease_until=batch.lease_until)
            log.error("batch %s failed after %d attempts: %s", batch.id, MAX_ATTEMPTS, error)
            outcomes.append(BatchOutcome(batch.id, "failed", size, batch.attempts, error))
            continue
        outbox.schedule_retry(
            batch.id, error=error, next_attempt_at=retry_at, lease_until=batch.lease_until
        )
        log.warning(
            "batch %s attempt %d failed (%s); retry at %s",
            batch.id,
            batch.attempts,
            error,
            retry_at,
        )
        outcomes.append(BatchOutcome(batch.id, "retry", size, batch.attempts, error, retry_at))
    for lease_until, ids in delivered.items():
        settled = outbox.settle_delivered(ids, at=now, lease_until=lease_until)
        if settled < len(ids):
            log.warning("%d batch(es) were delivered after their lease ended", len(ids) - settled)
    return outcomes
