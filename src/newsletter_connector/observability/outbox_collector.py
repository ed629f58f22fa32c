"""The outbox figures as Prometheus gauges, read from the database at scrape time.

They describe the shared database, not a process: every scrape of any instance reads them
afresh (one ``outbox status`` query), so nothing is stored per process and no worker can
report a stale figure. ``outbox metrics`` prints the same families.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import NewsletterError
from ..short_reads import short_reads

if TYPE_CHECKING:
    from ..service import NewsletterService

log = logging.getLogger(__name__)


class OutboxCollector:
    """A ``prometheus_client`` custom collector of ``service``'s outbox status.

    When the database does not answer, only ``newsletter_outbox_status_up 0`` is reported (the
    scrape itself still succeeds, so the request and runner figures are not lost with it). The
    read is a short read: a hung database costs the scrape ``db_short_reply_timeout`` (3 s),
    well inside Prometheus's default 10 s scrape timeout, not ``db_reply_timeout``."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        up = GaugeMetricFamily(
            "newsletter_outbox_status_up",
            "1 when the outbox figures below could be read from the database, else 0.",
        )
        try:
            with short_reads():
                status = self.service.admin.outbox_status()
        except NewsletterError as exc:
            log.warning("outbox metrics: %s", exc.message)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        batches = GaugeMetricFamily(
            "newsletter_outbox_batches", "Outbox batches by state.", labels=["state"]
        )
        for state in sorted(status.batches):
            batches.add_metric([state], status.batches[state])
        yield batches
        oldest = 0.0
        if status.oldest_pending_at is not None:
            now = self.service.context.clock()
            oldest = max(0.0, (now - status.oldest_pending_at).total_seconds())
        for name, documentation, value in (
            (
                "newsletter_outbox_unbatched_events",
                "Queued events not yet frozen into a batch.",
                status.unbatched,
            ),
            (
                "newsletter_outbox_undelivered_events",
                "Events queued or in a pending/sending batch.",
                status.undelivered_events,
            ),
            (
                "newsletter_outbox_waiting_retry_batches",
                "Pending batches that failed at least once and wait for their next attempt.",
                status.waiting_retry,
            ),
            (
                "newsletter_outbox_failed_events",
                "Events in failed batches (need outbox replay).",
                status.failed_events,
            ),
            (
                "newsletter_outbox_oldest_pending_age_seconds",
                "Age of the oldest undelivered event (0 when none).",
                round(oldest, 3),
            ),
            (
                "newsletter_outbox_has_error",
                "1 when a pending or failed batch carries an error.",
                1 if status.last_error else 0,
            ),
        ):
            yield GaugeMetricFamily(name, documentation, value=value)
