"""What a host's own subscriber table needs to keep the subscriber repository's contract
(:class:`~newsletter_connector.storage.host.SubscriberRepository`), as SQLAlchemy Core on any
table with ``id``, ``email`` and ``created_at`` columns: the built-in store uses the same.

- :class:`CommitHorizon`: keyset walks over PostgreSQL, MySQL and MariaDB ids that never
  skip a late commit (``add`` calls :meth:`~CommitHorizon.enter_insert`, ``list_page``
  passes its query through :meth:`~CommitHorizon.bound`);
- :func:`prefix_range`: ``find_by_prefix`` and an address prefix as a range of the email index;
- :func:`walk_where` and :func:`walk_order`: the ``WHERE`` and ``ORDER BY`` of ``scan`` and
  ``tally``'s bounded walks;
- :func:`changes_per_day`: ``changes_per_day`` from three timestamp columns.

Guide: docs/plugins.md, "Your own subscriber store".
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from itertools import pairwise
from typing import Any

from sqlalchemy import (
    Column,
    ColumnElement,
    DateTime,
    and_,
    func,
    literal,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.engine import Connection

from .commit_horizon import CommitHorizon
from .records import SubscriberDay
from .subscriber_query import SubscriberFilter, SubscriberOrder, SubscriberQuery

__all__ = [
    "CommitHorizon",
    "changes_per_day",
    "prefix_range",
    "prefix_successor",
    "signup_window",
    "walk_keys",
    "walk_order",
    "walk_where",
]

# Prefix ranges: ``column >= prefix AND column < successor``. Unlike ``LIKE 'prefix%'`` the
# prefix is taken literally (no escaping of ``%``, ``_`` or ``\``) and the plan is an index range
# read on every backend. It relies on the column comparing in code-point order: SQLite's default
# ``BINARY`` collation does; on PostgreSQL the column must be declared ``COLLATE "C"`` (as
# ``nc_subscribers.email`` is), since a database's own collation may be linguistic (ICU, libc
# ``en_US``), weighing punctuation, case and accents otherwise, and then the range misses or adds
# values and keyset pages skip rows. A column of another collation needs an index on
# ``column COLLATE "C"`` and ``column.collate("C")`` passed here and ordered by.

_MAX_CODE_POINT = 0x10FFFF


def prefix_successor(prefix: str) -> str | None:
    """The smallest string above every string starting with ``prefix`` (its last character
    raised by one), or ``None`` when there is none (``""``, or only U+10FFFF characters)."""
    stem = prefix.rstrip(chr(_MAX_CODE_POINT))
    if not stem:
        return None
    last = ord(stem[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # surrogates are not characters: skip to the next one
        last = 0xE000
    return stem[:-1] + chr(last)


def prefix_range(
    column: Any, prefix: str, *, after: str | None = None
) -> list[ColumnElement[bool]]:
    """The conditions selecting the values of ``column`` that start with ``prefix`` and, when
    ``after`` is given, sort above it (the keyset of the next page)."""
    conditions: list[ColumnElement[bool]] = []
    if prefix:
        conditions.append(column >= prefix)
    successor = prefix_successor(prefix)
    if successor is not None:
        conditions.append(column < successor)
    if after is not None:
        conditions.append(column > after)
    return conditions


# Bounded walks: the window of rows a walk reads, seeking an index.


def walk_where(columns: Any, query: SubscriberQuery) -> list[ColumnElement[bool]]:
    """The rows of ``columns``' table a walk of ``query`` reads, past ``query.after``, in the
    order of :func:`walk_order`: only the conditions an index on ``(created_at, id)`` (signup
    order) or on ``email`` (address order) can seek; the rest of the filter is checked on the
    rows read (in SQL, or by ``query.filter.matches``)."""
    found = [_past(columns, query)]
    if query.order == "signup":
        found.extend(signup_window(columns, query.filter))
    elif query.filter.address_prefix is not None:
        found.extend(prefix_range(columns.email, query.filter.address_prefix))
    return found


def walk_order(columns: Any, order: SubscriberOrder, descending: bool) -> list[Any]:
    """The ``ORDER BY`` of a walk in ``order`` over ``columns`` (``created_at, id`` or
    ``email``)."""
    return [key.desc() if descending else key.asc() for key in walk_keys(columns, order)]


def _past(columns: Any, query: SubscriberQuery) -> ColumnElement[bool]:
    if query.after is None:
        return true()
    if query.order == "address":
        email, after_email = columns.email, query.after[0]
        return email < after_email if query.descending else email > after_email  # type: ignore[no-any-return]
    created, ident = columns.created_at, columns.id
    at, after_id = query.after  # type: ignore[misc]
    beyond = created < at if query.descending else created > at
    tie = ident < after_id if query.descending else ident > after_id
    return or_(beyond, and_(created == at, tie))


def signup_window(columns: Any, flt: SubscriberFilter) -> list[ColumnElement[bool]]:
    """``flt``'s signup dates as conditions on ``columns``' ``created_at``."""
    found: list[ColumnElement[bool]] = []
    if flt.signed_up_from is not None:
        found.append(columns.created_at >= flt.signed_up_from)
    if flt.signed_up_before is not None:
        found.append(columns.created_at < flt.signed_up_before)
    return found


def walk_keys(columns: Any, order: SubscriberOrder) -> list[Any]:
    """The keys a walk in ``order`` sorts by: ``created_at, id`` or ``email``."""
    return [columns.created_at, columns.id] if order == "signup" else [columns.email]


# Subscriber changes per UTC day, for any table that stamps them.

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
