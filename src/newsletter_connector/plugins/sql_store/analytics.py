"""Repositories of the SQL store for analytics events, LLM usage and once-only job claims.

Every aggregate is set-based SQL grouped by UTC day over an index: analytics events by their
stored ``day`` (covering indexes per query), visitors, issues and LLM calls by their indexed
time column; no raw event is loaded into Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from datetime import datetime, time
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, Date, case, cast, distinct, exc, func, insert, select
from sqlalchemy.engine import Connection

from ...storage.host_sql import CommitHorizon
from ...storage.records import AnalyticsEventRecord, DayTraffic, ModelUsage
from .engine import is_mysql
from .reads import ReadAll, read_in_turn
from .record_builders import record_builder
from .repository import SqlRepository
from .stored_json import LenientJson
from .tables import analytics_events, analytics_visitors, issues, job_runs, llm_usage
from .upserts import insert_unless_stored

PAGEVIEW = "pageview"
LINK_CLICK = "link click"
ENGAGEMENT_PING = "engagement ping"

#: The export's ``after_id`` walk never passes an event still being captured.
EVENTS_HORIZON = CommitHorizon(0x6E6C_6576_7473, analytics_events.c.id)  # "nlevts"

_ADD_EVENT_COLUMNS = (
    "occurred_at",
    "day",
    "event_type",
    "visitor_id",
    "session_id",
    "path",
    "referrer",
    "props",
    "engaged_seconds",
)
_ADD_EVENT = insert(analytics_events)
# PostgreSQL: the same insert, entering the events' commit horizon in its own round trip.
_ADD_EVENT_IN_HORIZON = (
    insert(analytics_events)
    .from_select(
        _ADD_EVENT_COLUMNS, EVENTS_HORIZON.row_entering(analytics_events, _ADD_EVENT_COLUMNS)
    )
    .returning(analytics_events.c.id)
)


def utc_day(connection: Connection, column: Any) -> ColumnElement[Any]:
    """The UTC day of a naive-UTC timestamp column: a ``date`` on PostgreSQL, MySQL and
    MariaDB, the text
    ``YYYY-MM-DD`` on SQLite (the first ten characters of SQLAlchemy's stored form, much cheaper
    than ``strftime``). Pass results through :func:`day_key`."""
    if connection.dialect.name != "sqlite":
        return cast(column, Date)
    return func.substr(column, 1, 10)


def day_key(value: Any) -> str:
    """``YYYY-MM-DD`` of a :func:`utc_day` result (``str`` of a ``date`` is its ISO form)."""
    return str(value)


def binary_order(connection: Connection, column: Any) -> Any:
    """``column`` compared by code point on every dialect (PostgreSQL's default collation is
    locale-aware), so orderings match a plain Python sort."""
    return column.collate("C") if connection.dialect.name == "postgresql" else column


T = TypeVar("T")
_NOT_UTF8 = "Could not decode to UTF-8"


def _text_replacing_bad_utf8(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def tolerant_read(connection: Connection, read: Callable[[], T]) -> T:
    """``read()``; on SQLite, when it met text that is not UTF-8 (SQLite's TEXT holds any
    bytes, and sqlite3 refuses to decode them), ``read()`` once more with such bytes decoded
    to U+FFFD, as ``model.wire_safe`` does. The usual read pays nothing for this."""
    try:
        return read()
    except exc.OperationalError as error:
        if connection.dialect.name != "sqlite" or _NOT_UTF8 not in str(error.orig):
            raise
    raw = connection.connection.dbapi_connection
    previous = raw.text_factory  # type: ignore[union-attr]
    raw.text_factory = _text_replacing_bad_utf8  # type: ignore[union-attr]
    try:
        return read()
    finally:
        raw.text_factory = previous  # type: ignore[union-attr]


#: What an export page reads: the record's fields, in order. ``props`` is read leniently: a
#: stored text no parser accepts reads as ``None`` instead of failing the page.
_EVENT_COLUMNS = tuple(
    cast(analytics_events.c.props, LenientJson()).label("props")
    if f.name == "props"
    else analytics_events.c[f.name]
    for f in fields(AnalyticsEventRecord)
)
_build_event = record_builder(AnalyticsEventRecord)  # bench: export_walk


class SqlAnalytics(SqlRepository):
    """Analytics events and first sightings of visitors; aggregates computed by the backend.

    Analytics events; ``read_all`` runs the statements of :meth:`daily_traffic`."""

    def __init__(self, connection: Connection, read_all: ReadAll = read_in_turn) -> None:
        super().__init__(connection)
        self.read_all = read_all

    def add_event(
        self,
        *,
        occurred_at: datetime,
        event_type: str,
        visitor_id: str,
        session_id: str,
        path: str,
        referrer: str,
        props: dict[str, Any] | None,
        engaged_seconds: float | None,
    ) -> int:
        """Store one event; its id (ids grow with insertion order). Records the visitor's first
        sighting at ``occurred_at`` unless the visitor was already seen."""
        insert_unless_stored(
            self.connection,
            analytics_visitors,
            {"visitor_id": visitor_id, "first_seen_at": occurred_at},
        )
        values = {
            "occurred_at": occurred_at,
            "day": occurred_at.date(),
            "event_type": event_type,
            "visitor_id": visitor_id,
            "session_id": session_id,
            "path": path,
            "referrer": referrer,
            "props": props,
            "engaged_seconds": engaged_seconds,
        }
        dialect = self.connection.dialect.name
        if dialect == "postgresql":
            return int(self.connection.execute(_ADD_EVENT_IN_HORIZON, values).scalar_one())
        if is_mysql(dialect):
            EVENTS_HORIZON.enter_insert(self.connection)
        key = self.connection.execute(_ADD_EVENT, values).inserted_primary_key
        assert key is not None
        return int(key[0])

    def events_after(self, after_id: int, limit: int) -> list[AnalyticsEventRecord]:
        """At most ``limit`` events with id above ``after_id``, by id."""
        query = (
            select(*_EVENT_COLUMNS)
            .where(analytics_events.c.id > after_id)
            .order_by(analytics_events.c.id)
            .limit(limit)
        )
        bounded = EVENTS_HORIZON.bound(self.connection, query)
        rows = tolerant_read(self.connection, lambda: self.connection.execute(bounded).all())
        return [_build_event(row) for row in rows]

    def daily_traffic(
        self, start: datetime, end: datetime, *, top_pages: int
    ) -> dict[str, DayTraffic]:
        """Per UTC day (``YYYY-MM-DD``) in ``[start, end)``, its aggregates (a day without any
        event, visitor or issue may be absent). Each day's top list holds at most ``top_pages``
        paths, by views descending then path; ``issues`` counts issues recorded that day, kind
        ``test`` excluded."""
        days: dict[str, dict[str, Any]] = {}

        def day_entry(day: str) -> dict[str, Any]:
            return days.setdefault(day, {"top_pages": []})

        e = analytics_events.c
        # Each query reads one covering index of ``day`` (see tables.py): the day range is
        # the index range; sub-day bounds (never passed by the service) also filter the time.
        in_range: list[ColumnElement[bool]] = [e.day >= start.date()]
        if start.time() == end.time() == time():
            in_range.append(e.day < end.date())
        else:
            in_range += [e.day <= end.date(), e.occurred_at >= start, e.occurred_at < end]

        distinct_per_day = [
            select(e.day, func.count(distinct(column)).label("n")).where(*in_range).group_by(e.day)
            for column in (e.visitor_id, e.session_id)
        ]
        per_type = (
            select(
                e.event_type,
                e.day,
                func.count().label("n"),
                func.avg(e.engaged_seconds).label("avg"),
            )
            .where(*in_range, e.event_type.in_((LINK_CLICK, ENGAGEMENT_PING)))
            .group_by(e.event_type, e.day)
        )  # (pageviews are summed from the per-page counts below)
        per_page = (
            select(e.day.label("day"), e.path.label("path"), func.count().label("views"))
            .where(*in_range, e.event_type == PAGEVIEW)
            .group_by(e.day, e.path)
            .subquery()
        )
        ranked = select(
            per_page.c.day,
            per_page.c.path,
            per_page.c.views,
            func.row_number()
            .over(
                partition_by=per_page.c.day,
                order_by=(per_page.c.views.desc(), binary_order(self.connection, per_page.c.path)),
            )
            .label("rank"),
            func.sum(per_page.c.views).over(partition_by=per_page.c.day).label("pageviews"),
        ).subquery()
        top = (
            select(ranked.c.day, ranked.c.path, ranked.c.views, ranked.c.pageviews, ranked.c.rank)
            .where(ranked.c.rank <= max(top_pages, 1))  # (each day's first: its pageviews)
            .order_by(ranked.c.day, ranked.c.rank)
        )
        v = analytics_visitors.c
        first_day = utc_day(self.connection, v.first_seen_at).label("day")
        new = (
            select(first_day, func.count().label("n"))
            .where(v.first_seen_at >= start, v.first_seen_at < end)
            .group_by(first_day)
        )
        i = issues.c
        issue_day = utc_day(self.connection, i.created_at).label("day")
        recorded = (
            select(issue_day, func.count().label("n"))
            .where(i.created_at >= start, i.created_at < end, i.kind != "test")
            .group_by(issue_day)
        )

        # Heavier ones first: the built-in store shares them between two connections.
        visitors, sessions, types, pages, firsts, recorded_issues = tolerant_read(
            self.connection,
            lambda: self.read_all(
                self.connection, [*distinct_per_day, per_type, top, new, recorded]
            ),
        )
        for name, rows in (("unique_visitors", visitors), ("sessions", sessions)):
            for row in rows:
                day_entry(day_key(row["day"]))[name] = int(row["n"])
        for row in types:
            entry = day_entry(day_key(row["day"]))
            if row["event_type"] == LINK_CLICK:
                entry["link_clicks"] = int(row["n"])
            elif row["avg"] is not None:
                entry["avg_engagement_seconds"] = float(row["avg"])
        for row in pages:  # every day with a pageview has its top page here
            entry = day_entry(day_key(row["day"]))
            entry["pageviews"] = int(row["pageviews"])
            if row["rank"] <= top_pages:
                entry["top_pages"].append((row["path"], int(row["views"])))
        for row in firsts:
            day_entry(day_key(row["day"]))["new_visitors"] = int(row["n"])
        for row in recorded_issues:
            day_entry(day_key(row["day"]))["issues"] = int(row["n"])

        return {
            name: DayTraffic(**{**values, "top_pages": tuple(values["top_pages"])})
            for name, values in days.items()
        }


class SqlLlmUsage(SqlRepository):
    """One row per LLM call of a digest run."""

    def add(
        self,
        *,
        occurred_at: datetime,
        model: str,
        ok: bool,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        """Record one call."""
        self.connection.execute(
            insert(llm_usage).values(
                occurred_at=occurred_at,
                model=model,
                ok=ok,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        )

    def daily_usage(self, start: datetime, end: datetime) -> dict[str, list[ModelUsage]]:
        """Per UTC day in ``[start, end)``, usage by model ordered by model name."""
        u = llm_usage.c
        day = utc_day(self.connection, u.occurred_at).label("day")
        query = (
            select(
                day,
                u.model,
                func.count().label("calls"),
                func.sum(case((u.ok.is_(False), 1), else_=0)).label("failures"),
                func.sum(u.prompt_tokens).label("prompt_tokens"),
                func.sum(u.completion_tokens).label("completion_tokens"),
            )
            .where(u.occurred_at >= start, u.occurred_at < end)
            .group_by(day, u.model)
            .order_by(day, binary_order(self.connection, u.model))
        )
        result: dict[str, list[ModelUsage]] = {}
        for row in self.connection.execute(query).mappings():
            result.setdefault(day_key(row["day"]), []).append(
                ModelUsage(
                    model=row["model"],
                    calls=int(row["calls"]),
                    failures=int(row["failures"] or 0),
                    prompt_tokens=int(row["prompt_tokens"] or 0),
                    completion_tokens=int(row["completion_tokens"] or 0),
                )
            )
        return result


class SqlJobRuns(SqlRepository):
    """Once-only jobs, claimed by key across every runner."""

    def claim(self, job_key: str, *, at: datetime) -> bool:
        # RETURNING yields a row only when this statement inserted it (rowcount is not
        # reliable for ON CONFLICT DO NOTHING across drivers).
        """Record ``job_key`` as run; true if this call claimed it. Of racing transactions,
        exactly one gets true."""
        return insert_unless_stored(self.connection, job_runs, {"job_key": job_key, "ran_at": at})

    def latest(self, prefix: str) -> str | None:
        """The greatest claimed key starting with ``prefix`` (string order), or ``None``."""
        key = job_runs.c.job_key
        value: str | None = self.connection.scalar(
            select(func.max(key)).where(key.startswith(prefix, autoescape=True))
        )
        return value
