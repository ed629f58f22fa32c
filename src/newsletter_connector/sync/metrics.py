"""The ``outbox status`` figures in Prometheus text format (version 0.0.4), for
``newsletter-connector outbox metrics``; there is deliberately no HTTP endpoint.
"""

from __future__ import annotations

from datetime import datetime

from ..storage import OutboxStatus


def render_metrics(status: OutboxStatus, now: datetime) -> str:
    """The metrics text for ``status`` observed at ``now`` (naive UTC)."""
    lines = [
        "# HELP newsletter_outbox_batches Outbox batches by state.",
        "# TYPE newsletter_outbox_batches gauge",
    ]
    for state in sorted(status.batches):
        lines.append(f'newsletter_outbox_batches{{state="{state}"}} {status.batches[state]}')
    oldest = 0.0
    if status.oldest_pending_at is not None:
        oldest = max(0.0, (now - status.oldest_pending_at).total_seconds())
    lines += [
        "# HELP newsletter_outbox_unbatched_events Queued events not yet frozen into a batch.",
        "# TYPE newsletter_outbox_unbatched_events gauge",
        f"newsletter_outbox_unbatched_events {status.unbatched}",
        "# HELP newsletter_outbox_undelivered_events Events queued or in a pending/sending batch.",
        "# TYPE newsletter_outbox_undelivered_events gauge",
        f"newsletter_outbox_undelivered_events {status.undelivered_events}",
        "# HELP newsletter_outbox_failed_events Events in failed batches (need outbox replay).",
        "# TYPE newsletter_outbox_failed_events gauge",
        f"newsletter_outbox_failed_events {status.failed_events}",
        "# HELP newsletter_outbox_oldest_pending_age_seconds Age of the oldest undelivered "
        "event (0 when none).",
        "# TYPE newsletter_outbox_oldest_pending_age_seconds gauge",
        f"newsletter_outbox_oldest_pending_age_seconds {oldest:.3f}",
        "# HELP newsletter_outbox_has_error 1 when a pending or failed batch carries an error.",
        "# TYPE newsletter_outbox_has_error gauge",
        f"newsletter_outbox_has_error {1 if status.last_error else 0}",
    ]
    return "\n".join(lines) + "\n"
