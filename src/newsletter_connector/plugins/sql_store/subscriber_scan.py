"""The SQL store's bounded walks over ``nc_subscribers`` (:mod:`~newsletter_connector.storage.
subscriber_query`): a filter is checked inside the database, on a window of at most ``budget``
rows read in walk order from an index (``(created_at, id)`` or the unique ``email``).

The window takes only the conditions its index can seek (the signup dates in signup order, the
address prefix in address order); every other condition filters the window's rows, so no
filter, however rare its matches, reads more than ``budget`` rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, Text, and_, case, cast, func, or_, select, text, true
from sqlalchemy.engine import Connection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import GenericFunction

from ...storage.host_sql import prefix_range, signup_window, walk_keys, walk_order, walk_where
from ...storage.records import SubscriberRecord
from ...storage.subscriber_query import (
    SubscriberFilter,
    SubscriberPosition,
    SubscriberQuery,
    SubscriberScan,
    SubscriberTally,
    tally_walk,
)
from .engine import UNICODE_LOWER
from .tables import subscribers


class unicode_lower(GenericFunction[str]):
    """``lower(text)`` as :meth:`str.lower` folds it, on every backend."""

    inherit_cache = True
    name = "unicode_lower"


@compiles(unicode_lower)
def _lower_everywhere(element: Any, compiler: Any, **kw: Any) -> str:
    return f"lower({compiler.process(element.clauses, **kw)})"


@compiles(unicode_lower, "sqlite")
def _lower_sqlite(element: Any, compiler: Any, **kw: Any) -> str:
    return f"{UNICODE_LOWER}({compiler.process(element.clauses, **kw)})"


def filter_conditions(columns: Any, flt: SubscriberFilter) -> list[ColumnElement[bool]]:
    """``flt`` as SQL conditions on ``columns`` (a table's or a subquery's ``c``)."""
    found: list[ColumnElement[bool]] = []
    if flt.status is not None:
        found.append(columns.status == flt.status)
    if flt.category is not None:
        found.append(columns.categories_text.contains(f'"{flt.category}"', autoescape=True))
    for name, cadence in flt.prefs:
        found.append(columns[f"pref_{name}"] == cadence)
    if flt.sms is not None:
        found.append(columns.sms_enabled == flt.sms)
    if flt.zip_prefix is not None:
        found.extend(prefix_range(columns.zip, flt.zip_prefix))
    if flt.age_range is not None:
        found.append(columns.age_range == flt.age_range)
    found.extend(signup_window(columns, flt))
    if flt.address_prefix is not None:
        found.extend(prefix_range(columns.email, flt.address_prefix))
    if flt.name_prefix is not None:
        found.append(
            or_(
                *(
                    unicode_lower(columns[name]).startswith(flt.name_prefix, autoescape=True)
                    for name in ("first_name", "last_name")
                )
            )
        )
    return found


def _window(query: SubscriberQuery, columns: list[Any]) -> Select[Any]:
    return (
        select(*columns)
        .where(*walk_where(subscribers.c, query))
        .order_by(*walk_order(subscribers.c, query.order, query.descending))
    )


#: The columns each filter field reads (``categories`` as its JSON text).
_FILTER_COLUMNS = {
    "status": ("status",),
    "category": ("categories",),
    "sms": ("sms_enabled",),
    "zip_prefix": ("zip",),
    "age_range": ("age_range",),
    "address_prefix": ("email",),
    "name_prefix": ("first_name", "last_name"),
}


def _window_columns(flt: SubscriberFilter) -> list[Any]:
    """The id, both walk keys and the columns ``flt`` checks: a walk carries no more."""
    names = {"id", "created_at", "email"}
    for attribute, columns in _FILTER_COLUMNS.items():
        if getattr(flt, attribute) is not None:
            names.update(columns)
    names.update(f"pref_{name}" for name, _cadence in flt.prefs)
    found: list[Any] = [subscribers.c[name] for name in sorted(names - {"categories"})]
    if "categories" in names:
        found.append(cast(subscribers.c.categories, Text).label("categories_text"))
    return found


def scan(
    connection: Connection, query: SubscriberQuery, select_record: Any, build: Any
) -> SubscriberScan:
    """:meth:`~newsletter_connector.storage.host.SubscriberRepository.scan`; ``select_record``
    picks a record's fields from a ``c`` collection and ``build`` makes the record of a row.
    The walk reads only what the filter checks; the page's whole rows are read by id."""
    walk = _window(query, _window_columns(query.filter)).limit(query.budget).subquery("walk")
    hits = (
        select(walk.c.id)
        .where(*filter_conditions(walk.c, query.filter))
        .order_by(*walk_order(walk.c, query.order, query.descending))
        .limit(query.limit)
        .subquery("hits")
    )
    rows = connection.execute(
        select_record(subscribers.c)
        .join_from(subscribers, hits, hits.c.id == subscribers.c.id)
        .order_by(*walk_order(subscribers.c, query.order, query.descending))
    ).all()
    items: list[SubscriberRecord] = [build(row) for row in rows]
    if len(items) == query.limit:
        return SubscriberScan(items, None)
    edge = connection.execute(
        _window(query, walk_keys(subscribers.c, query.order)).offset(query.budget - 1).limit(2)
    ).all()
    stopped: SubscriberPosition | None = tuple(edge[0]) if len(edge) == 2 else None
    return SubscriberScan(items, stopped)


def tally(connection: Connection, flt: SubscriberFilter, *, budget: int) -> SubscriberTally:
    """:meth:`~newsletter_connector.storage.host.SubscriberRepository.tally`: one count over
    the first ``budget`` rows of :func:`~newsletter_connector.storage.subscriber_query.
    tally_walk`. Beyond them, a signup window's size comes from the span of ids it holds (ids
    follow creation), scaled on PostgreSQL by the planner's row count, since a sequence skips
    the ids of inserts that conflicted; an address range's size is left unknown."""
    first = tally_walk(flt, budget)
    walk = _window(first, _window_columns(flt)).limit(budget).subquery("walk")
    hit = case((and_(true(), *filter_conditions(walk.c, flt)), 1), else_=0)
    examined, matched = connection.execute(
        select(func.count(), func.coalesce(func.sum(hit), 0)).select_from(walk)
    ).one()
    examined, matched = int(examined), int(matched)
    if examined < budget:
        population: int | None = examined
    elif first.order == "address":
        population = None
    else:
        population = max(_window_size(connection, flt), examined)
    return SubscriberTally(matched=matched, examined=examined, population=population)


def _window_size(connection: Connection, flt: SubscriberFilter) -> int:
    window = signup_window(subscribers.c, flt)
    span = _id_span(connection, window)
    if connection.dialect.name != "postgresql":
        return span
    rows = connection.scalar(
        text("SELECT reltuples FROM pg_class WHERE oid = CAST(:name AS regclass)"),
        {"name": subscribers.name},
    )
    if rows is None or rows <= 0:
        return span
    whole = span if not window else _id_span(connection, [])
    return round(float(rows) * span / whole) if whole else span


def _id_span(connection: Connection, window: list[ColumnElement[bool]]) -> int:
    """How many ids lie between the window's first and last signups (each one index read)."""
    ends = []
    for descending in (False, True):
        key = walk_order(subscribers.c, "signup", descending)
        ends.append(
            connection.scalar(select(subscribers.c.id).where(*window).order_by(*key).limit(1))
        )
    first, last = ends
    if first is None or last is None:
        return 0
    return abs(int(last) - int(first)) + 1
