"""Subscriber changes per UTC day (``SubscriberRepository.changes_per_day``) for any table
that stamps them: the built-in subscribers table and a host's own."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, time, timedelta

from sqlalchemy import Column, func, select
from sqlalchemy.engine import Connection

from ...storage import SubscriberDay


def changes_per_day(
    connection: Connection,
    *,
    created: Column[datetime],
    unsubscribed: Column[datetime],
    bounced: Column[datetime],
    first: date,
    last: date,
) -> list[SubscriberDay]:
    """Counts of ``created``, ``unsubscribed`` and ``bounced`` stamps per UTC day from ``first``
    to ``last``: one grouped read of each column's index range, days without any left out."""
    start = datetime.combine(first, time.min)
    end = datetime.combine(last + timedelta(days=1), time.min)
    counts: dict[date, list[int]] = defaultdict(lambda: [0, 0, 0])
    for slot, column in enumerate((created, unsubscribed, bounced)):
        day = func.date(column)
        rows = connection.execute(
            select(day, func.count()).where(column >= start, column < end).group_by(day)
        )
        for stamped_day, count in rows:
            counts[date.fromisoformat(str(stamped_day))][slot] = int(count)
    return [SubscriberDay(day, *counts[day]) for day in sorted(counts)]
