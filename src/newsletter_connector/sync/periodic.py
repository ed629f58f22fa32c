"""Periodic work the runner does on every loop, before delivering.

A task ``task(now)`` (naive UTC) queues events when they fall due, claiming its own work so it
is safe to call often and from several runners at once. A failing task never stops delivery.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..service import NewsletterService

PeriodicTask = Callable[[datetime], object]


def default_periodic_tasks(service: NewsletterService) -> list[PeriodicTask]:
    """The periodic tasks every runner calls: one ``analytics.daily_rollup`` per completed UTC
    day, and the scheduled daily and weekly digests, once per period."""
    return [
        service.analytics.queue_completed_day_rollups,
        service.issues.run_scheduled_digests,
    ]
