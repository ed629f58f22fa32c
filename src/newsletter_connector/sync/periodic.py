"""Periodic work the runner does on every loop, before delivering.

A task ``task(now)`` (naive UTC) queues events when they fall due, claiming its own work so it
is safe to call often and from several runners at once. A failing task never stops delivery.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from ..plugin_manager import has_issue_content
from ..settings import ENV_PREFIX, SettingsError

if TYPE_CHECKING:
    from ..service import NewsletterService

log = logging.getLogger(__name__)

PeriodicTask = Callable[[datetime], object]

#: Where an operator reads how scheduled digests work.
SCHEDULING_DOCS = "docs/issues.md#scheduling"


def default_periodic_tasks(service: NewsletterService) -> list[PeriodicTask]:
    """The periodic tasks every runner calls: the runner's heartbeat, which the admin pages
    read to say whether work waiting for a runner will be done; one
    ``analytics.daily_rollup`` per completed UTC day; keeping each settled day's rollup for the
    admin analytics page; the job loop (:meth:`~..service.jobs.JobService.work`: a slice of the
    waiting bulk acts and imports, of every registered kind); and, when
    :func:`schedules_digests`, the daily and weekly digests once per period.

    :raises SettingsError: ``scheduled_digests`` is ``on`` but no content plugin is installed.
    """
    tasks: list[PeriodicTask] = [
        service.runner_status.beat,
        service.analytics.queue_completed_day_rollups,
        service.analytics.keep_settled_rollups,
        service.jobs.work,
    ]
    if schedules_digests(service):
        tasks.append(service.issues.run_scheduled_digests)
    return tasks


def schedules_digests(service: NewsletterService) -> bool:
    """Whether a runner of ``service`` records the scheduled digests, by the
    ``scheduled_digests`` setting: ``on`` and ``off`` say so; ``auto`` is on exactly when an
    issue content plugin is installed, and logs one INFO line when it is not (a run without
    content could only fail on every loop).

    :raises SettingsError: ``on`` without a content plugin, naming the setting.
    """
    mode = service.settings.scheduled_digests
    if mode == "off":
        return False
    if has_issue_content(service.context.plugins):
        return True
    if mode == "on":
        raise SettingsError(
            f"setting scheduled_digests ({ENV_PREFIX}SCHEDULED_DIGESTS) is on, but no issue "
            "content plugin (implementing newsletter_issue_content) is installed, so no "
            "scheduled digest could be built; install one, or set it to auto or off "
            f"(see {SCHEDULING_DOCS})"
        )
    log.info(
        "scheduled digests are off: no issue content plugin is installed; see %s",
        SCHEDULING_DOCS,
    )
    return False
