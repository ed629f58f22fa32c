"""Periodic work the runner does on every loop, before delivering.

A periodic task is a callable ``task(now)`` (``now`` a naive UTC datetime) that queues events
when they fall due and is safe to call often and from several runners at once (it must claim
its own work, e.g. a ``nc_job_runs`` key, so each job runs once). A failing task is logged and
never stops delivery.

EXTENSION POINT: :func:`default_periodic_tasks` is where the service's own periodic jobs are
listed; add new ones there.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..service import NewsletterService

PeriodicTask = Callable[[datetime], object]


def default_periodic_tasks(service: NewsletterService) -> list[PeriodicTask]:
    """The periodic tasks every runner calls: one ``analytics.daily_rollup`` per completed
    UTC day, and the scheduled digests, once those sub-services are present."""
    tasks: list[PeriodicTask] = []
    analytics = getattr(service, "analytics", None)
    if analytics is not None and hasattr(analytics, "queue_completed_day_rollups"):
        tasks.append(analytics.queue_completed_day_rollups)
    issues = getattr(service, "issues", None)
    if issues is not None and hasattr(issues, "run_scheduled_digests"):
        tasks.append(issues.run_scheduled_digests)
    return tasks
