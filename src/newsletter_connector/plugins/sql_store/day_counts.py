"""Subscriber changes per UTC day (``SubscriberRepository.changes_per_day``) for any table
that stamps them: the built-in subscribers table and a host's own."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from itertools import pairwise
from typing import Any

from sqlalchemy import Column, DateTime, func, literal, select, union_all
from sqlalchemy.engine import Connection

from ...storage.records import SubscriberDay

#: Days counted by one statement (SQLite allows 500 terms in a compound SELECT).
DAYS_PER_STATEMENT = 100


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
    to ``last``, days without any left out.

    For each day, a count of each column's index range from that day's midnight to the next,
    up to :data:`DAYS_PER_STATEMENT` days a statement (bench: dashboard; counting ranges reads
    no stamp, while grouping by a day computed from every stamp costs several times as much on
    SQLite).
    """
    changes: list[SubscriberDay] = []
    day = first
    while day <= last:
        through = min(last, day + timedelta(days=DAYS_PER_STATEMENT - 1))
        changes += _counted(connection, (created, unsubscribed, bounced), day, through)
        day = through + timedelta(days=1)
    return changes


def _counted(
    connection: Connection,
    columns: tuple[Column[datetime], Column[datetime], Column[datetime]],
    first: date,
    last: date,
) -> list[SubscriberDay]:
    """``changes_per_day`` for at most :data:`DAYS_PER_STATEMENT` days, in one statement;
    ``columns`` are the created, unsubscribed and bounced stamps, in that order."""
    midnights = [
        datetime.combine(first + timedelta(days=n), time.min)
        for n in range((last - first).days + 2)
    ]
    days = union_all(
        *(
            select(literal(start, DateTime).label("start"), literal(end, DateTime).label("end"))
            for start, end in pairwise(midnights)
        )
    ).cte("days")

    def stamped(column: Column[datetime]) -> Any:
        return (
            select(func.count())
            .where(column >= days.c.start, column < days.c.end)
            .scalar_subquery()
        )

    rows = connection.execute(select(days.c.start, *(stamped(column) for column in columns)))
    changes = [
        SubscriberDay(_day(start), int(signups), int(unsubscribes), int(bounces))
        for start, signups, unsubscribes, bounces in rows
    ]
    return sorted(
        (day for day in changes if day.signups or day.unsubscribes or day.bounces),
        key=lambda day: day.day,
    )


def _day(start: Any) -> date:
    """The date of a day's midnight as the driver returns it (a ``datetime``, or its text)."""
    return start.date() if isinstance(start, datetime) else date.fromisoformat(str(start)[:10])
