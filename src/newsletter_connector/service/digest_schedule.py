"""When the scheduled digests are due (UTC), and which period a run belongs to.

Only ``daily`` and ``weekly`` are scheduled: daily from :data:`DIGEST_HOUR_UTC`:00, its period
the day; weekly from that hour on :data:`WEEKLY_WEEKDAY`, its period the ISO week (recorded
later that week if missed, never twice). Periods already over are not back-filled.
"""

from __future__ import annotations

from datetime import date, datetime

from ..timeutil import to_naive_utc

ALL_KINDS = ("daily", "weekly", "manual", "test")

#: Hour (UTC) from which the digests are due: before the US morning read.
DIGEST_HOUR_UTC = 10
#: ISO weekday of the weekly digest (1 = Monday).
WEEKLY_WEEKDAY = 1


def period_key(kind: str, issue_date: date) -> str | None:
    """The once-per-period key of an issue: ``daily:YYYY-MM-DD``, ``weekly:YYYY-Www`` (ISO
    week of ``issue_date``), or ``None`` for ``manual`` and ``test``."""
    if kind == "daily":
        return f"daily:{issue_date.isoformat()}"
    if kind == "weekly":
        year, week, _ = issue_date.isocalendar()
        return f"weekly:{year:04d}-W{week:02d}"
    return None


def due_kinds(now: datetime) -> list[str]:
    """The scheduled kinds whose current period has started at ``now`` (UTC; aware or naive),
    whether or not its issue exists."""
    now = to_naive_utc(now)
    started_today = now.hour >= DIGEST_HOUR_UTC
    kinds = []
    if started_today:
        kinds.append("daily")
    weekday = now.isoweekday()
    if weekday > WEEKLY_WEEKDAY or (weekday == WEEKLY_WEEKDAY and started_today):
        kinds.append("weekly")
    return kinds
