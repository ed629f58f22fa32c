"""When the scheduled digests are due, and which period a run belongs to.

Only ``daily`` and ``weekly`` issues are scheduled (``manual`` and ``test`` are operator runs and
belong to no period). Times are UTC:

- **daily**: due from :data:`DIGEST_HOUR_UTC`:00 each day; its period is that day
  (``daily:2026-11-21``).
- **weekly**: due from :data:`DIGEST_HOUR_UTC`:00 on :data:`WEEKLY_WEEKDAY` (Monday); its period
  is the ISO week (``weekly:2026-W47``), so a runner that was down on Monday still records the
  week's issue later that week, and never twice.

A missed period is not back-filled once it is over (a stale digest is worse than none); the
operator can still record it with ``newsletter-connector digest --kind daily --date D``.
"""

from __future__ import annotations

from datetime import date, datetime

from ..timeutil import to_naive_utc

SCHEDULED_KINDS = ("daily", "weekly")
ALL_KINDS = ("daily", "weekly", "manual", "test")

#: Hour of the day (UTC) from which the daily and weekly digests are due: 10:00 UTC is
#: 6 a.m. US Eastern in summer, 5 a.m. in winter — before the morning read.
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
    """The scheduled kinds whose current period has started at ``now`` (UTC; aware or naive).

    Whether the period's issue already exists is for the caller to check (by period key).
    """
    now = to_naive_utc(now)
    started_today = now.hour >= DIGEST_HOUR_UTC
    kinds = []
    if started_today:
        kinds.append("daily")
    weekday = now.isoweekday()
    if weekday > WEEKLY_WEEKDAY or (weekday == WEEKLY_WEEKDAY and started_today):
        kinds.append("weekly")
    return kinds
