"""Analytics: capture of site events (sanitised by ``analytics_sanitize``), LLM usage records,
the export reads, and daily rollups computed on demand in the database (docs/analytics.md,
docs/export.md).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlsplit

from ..errors import DbUnavailable, InvalidRequest
from ..model.analytics import DailyRollup
from ..plugins.sql_store.store import SqlUnitOfWork
from ..storage.records import AnalyticsEventRecord, DayTraffic
from ..timeutil import to_naive_utc
from . import analytics_sanitize as clean
from .context import ServiceContext
from .events import queue_event

log = logging.getLogger(__name__)

MAX_ROLLUP_DAYS = 92
#: How long after a UTC day ends its rollup may be kept (:meth:`AnalyticsService.kept_rollups`):
#: long past any capture still committing, or any server's clock a little behind.
SETTLE_AFTER = timedelta(hours=1)
MAX_EVENTS_LIMIT = 1000
TOP_PAGES = 10
ROLLUP_JOB_PREFIX = "rollup:"
#: Job key prefix of :meth:`AnalyticsService.keep_settled_rollups`, one key per settled day.
KEEP_JOB_PREFIX = "rollups-kept:"
#: nc_settings entry holding the first UTC day the rollup job covers (the day of its first run).
ROLLUP_START_SETTING = "analytics_rollups_start"
MAX_TOKENS = 2**31 - 1
MAX_MODEL_LENGTH = 200


@dataclass(frozen=True)
class EventsPage:
    """One page of the export event walk; ``next_after_id`` is the cursor to send next."""

    events: list[AnalyticsEventRecord]
    next_after_id: int


def _llm_call(call: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """One validated LLM call; field names in errors carry ``prefix``."""
    if not isinstance(call, Mapping):
        raise InvalidRequest(
            f"{prefix or 'call '}must be an object", field=prefix.rstrip(".") or None
        )
    model = call.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_LENGTH:
        raise InvalidRequest(
            f"{prefix}model must be 1-{MAX_MODEL_LENGTH} characters", field=f"{prefix}model"
        )
    ok = call.get("ok")
    if not isinstance(ok, bool):
        raise InvalidRequest(f"{prefix}ok must be true or false", field=f"{prefix}ok")
    tokens = {}
    for name in ("prompt_tokens", "completion_tokens"):
        value = call.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
            raise InvalidRequest(
                f"{prefix}{name} must be an integer from 0 to {MAX_TOKENS}", field=f"{prefix}{name}"
            )
        tokens[name] = value
    unknown = sorted(
        str(k) for k in set(call) - {"model", "ok", "prompt_tokens", "completion_tokens"}
    )
    if unknown:
        raise InvalidRequest(
            f"{prefix}{unknown[0]} is not a known field", field=f"{prefix}{unknown[0]}"
        )
    return {"model": model.strip(), "ok": ok, **tokens}


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time())


def _day_end(day: date) -> datetime:
    """The exclusive upper bound of ``day`` (safe for the last representable date)."""
    return datetime.max if day == date.max else _day_start(day + timedelta(days=1))


def _check_range(from_date: date, to_date: date) -> None:
    if to_date < from_date:
        raise InvalidRequest("to must be on or after from", field="to")
    if (to_date - from_date).days + 1 > MAX_ROLLUP_DAYS:
        raise InvalidRequest(f"from..to may span at most {MAX_ROLLUP_DAYS} days", field="to")


def _store(uow: SqlUnitOfWork, rollups: list[dict[str, Any]], now: datetime) -> None:
    """Keep each of ``rollups`` without ``source`` (which follows the site's URL setting)."""
    for rollup in rollups:
        figures = {key: value for key, value in rollup.items() if key != "source"}
        uow.day_rollups.keep(date.fromisoformat(rollup["date"]), figures, at=now)


def _settled_through(now: datetime) -> date:
    """The last UTC day that ended :data:`SETTLE_AFTER` or more before ``now``."""
    return (now - SETTLE_AFTER).date() - timedelta(days=1)


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def _runs(days: list[date]) -> list[tuple[date, date]]:
    """The first and last day of each run of consecutive days in ``days`` (ascending)."""
    runs: list[tuple[date, date]] = []
    for day in days:
        if runs and runs[-1][1] + timedelta(days=1) == day:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def _with_source(figures: dict[str, Any], source: str) -> dict[str, Any]:
    """A kept rollup in the wire shape: ``source`` back in its place after ``date``."""
    return {"date": figures["date"], "source": source, **figures}


class AnalyticsService:
    """Analytics capture and reads; each call runs in its own transaction."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    @property
    def source(self) -> str:
        """The site identifier in every rollup: the host (and port) of the site's URL."""
        parts = urlsplit(self.context.settings.effective_site_url)
        host = (parts.hostname or "").lower()
        return host if parts.port is None else f"{host}:{parts.port}"

    # -- capture ---------------------------------------------------------------------------------

    def record_event(
        self,
        event_type: str,
        *,
        visitor_id: str,
        session_id: str,
        path: str,
        referrer: str | None = "",
        href: str | None = None,
        seconds: float | None = None,
        props: dict[str, Any] | None = None,
    ) -> int:
        """Sanitise and store one event at the current time; return its id.

        ``href`` (only and always for ``link click``) is the link's target; ``seconds`` (only
        and always for ``engagement ping``) the visible seconds since the page's previous
        ping. Both travel in the exported ``props`` as ``href`` and ``engaged_seconds``.
        :class:`InvalidRequest` names any bad field.
        """
        event_type = clean.clean_event_type(event_type)
        cleaned_props = clean.clean_props(props)
        engaged: float | None = None
        if event_type == "link click":
            cleaned_props["href"] = clean.clean_url(href, "href", allow_empty=False)
        elif href is not None:
            raise InvalidRequest("href is only for link click events", field="href")
        if event_type == "engagement ping":
            if seconds is None:
                raise InvalidRequest("seconds is required for engagement ping", field="seconds")
            engaged = clean.clean_seconds(seconds)
            cleaned_props["engaged_seconds"] = engaged
        elif seconds is not None:
            raise InvalidRequest("seconds is only for engagement ping events", field="seconds")
        values: dict[str, Any] = {
            "event_type": event_type,
            "visitor_id": clean.clean_id(visitor_id, "visitor_id"),
            "session_id": clean.clean_id(session_id, "session_id"),
            "path": clean.clean_path(path),
            "referrer": clean.clean_url(referrer, "referrer", allow_empty=True),
            "props": cleaned_props or None,
            "engaged_seconds": engaged,
        }
        with self.context.storage.transaction() as uow:
            return uow.analytics.add_event(occurred_at=self.context.clock(), **values)

    def record_llm_usage(
        self, model: str, ok: bool, prompt_tokens: int = 0, completion_tokens: int = 0
    ) -> None:
        """Record one LLM call of a digest run (``ok`` false: a failed call);
        :class:`InvalidRequest` for a blank or over-long model, or bad token counts."""
        self.record_llm_calls(
            [
                {
                    "model": model,
                    "ok": ok,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                }
            ],
            field_prefix="",
        )

    def record_llm_calls(
        self, calls: Iterable[Mapping[str, Any]], *, field_prefix: str = "llm_calls"
    ) -> int:
        """Record ``[{model, ok, prompt_tokens, completion_tokens}, ...]`` (tokens default
        to 0) all or none; return how many.

        :raises InvalidRequest: naming the bad entry, e.g. ``llm_calls[2].model``.
        """
        rows = [
            _llm_call(call, f"{field_prefix}[{n}]." if field_prefix else "")
            for n, call in enumerate(calls)
        ]
        if rows:
            now = self.context.clock()
            with self.context.storage.transaction() as uow:
                for row in rows:
                    uow.llm_usage.add(occurred_at=now, **row)
        return len(rows)

    # -- export reads ----------------------------------------------------------------------------

    def events_page(self, after_id: int = 0, limit: int = 500) -> EventsPage:
        """At most ``limit`` events with id above ``after_id``, oldest first;
        ``next_after_id`` is the last id returned, or ``after_id`` when caught up."""
        if after_id < 0:
            raise InvalidRequest("after_id must be >= 0", field="after_id")
        if not 1 <= limit <= MAX_EVENTS_LIMIT:
            raise InvalidRequest(f"limit must be between 1 and {MAX_EVENTS_LIMIT}", field="limit")
        with self.context.storage.transaction(write=False) as uow:
            events = uow.analytics.events_after(after_id, limit)
        return EventsPage(events, events[-1].id if events else after_id)

    def rollups(self, from_date: date, to_date: date) -> list[dict[str, Any]]:
        """One rollup per UTC day from ``from_date`` to ``to_date`` inclusive, each computed
        now (the export's read); ``to`` before ``from`` or over 92 days is
        :class:`InvalidRequest` naming ``to``."""
        _check_range(from_date, to_date)
        with self.context.storage.transaction(write=False) as uow:
            return self._rollups(uow, from_date, to_date)

    def kept_rollups(self, from_date: date, to_date: date) -> list[dict[str, Any]]:
        """The same rollups as :meth:`rollups` (same range rules), for the admin pages: a day
        that ended :data:`SETTLE_AFTER` ago or more is settled (every event, LLM call and issue
        is stamped when it is recorded, so nothing can join it); its rollup is computed once,
        kept, and read from there on. Only the days not yet settled are computed every time."""
        _check_range(from_date, to_date)
        now = self.context.clock()
        settled_through = _settled_through(now)
        with self.context.storage.transaction(write=False) as uow:
            kept = uow.day_rollups.kept(from_date, min(to_date, settled_through))
            wanted = _days(from_date, to_date)
            computed = {
                date.fromisoformat(entry["date"]): entry
                for first, last in _runs([day for day in wanted if day not in kept])
                for entry in self._rollups(uow, first, last)
            }
        self._keep([computed[day] for day in computed if day <= settled_through], now)
        source = self.source
        return [
            computed[day] if day in computed else _with_source(kept[day], source) for day in wanted
        ]

    def keep_settled_rollups(self, now: datetime | None = None) -> int:
        """Keep the rollup of every settled day an admin range can show (the last
        :data:`MAX_ROLLUP_DAYS` days) that is not kept yet, so the analytics page reads them
        instead of computing them; return how many days this call kept. A periodic task of the
        runner: once a day has settled, the first call keeps what is missing, in one write
        with its job claim (of racing runners one writes; a failure leaves it to the next
        call), and later calls only read the claim.
        """
        now = to_naive_utc(now) if now is not None else self.context.clock()
        last = _settled_through(now)
        job = KEEP_JOB_PREFIX + last.isoformat()
        first = now.date() - timedelta(days=MAX_ROLLUP_DAYS - 1)
        with self.context.storage.transaction(write=False) as uow:
            latest = uow.jobs.latest(KEEP_JOB_PREFIX)
            if latest is not None and latest >= job:
                return 0
            kept = uow.day_rollups.kept(first, last)
            missing = [day for day in _days(first, last) if day not in kept]
            computed = [entry for a, b in _runs(missing) for entry in self._rollups(uow, a, b)]
        with self.context.storage.transaction() as uow:
            if not uow.jobs.claim(job, at=now):
                return 0
            _store(uow, computed, now)
        return len(computed)

    def _rollups(self, uow: SqlUnitOfWork, from_date: date, to_date: date) -> list[dict[str, Any]]:
        start, end = _day_start(from_date), _day_end(to_date)
        traffic = uow.analytics.daily_traffic(start, end, top_pages=TOP_PAGES)
        usage = uow.llm_usage.daily_usage(start, end)
        source = self.source
        days = (to_date - from_date).days + 1
        result = []
        for offset in range(days):
            day = from_date + timedelta(days=offset)
            key = day.isoformat()
            rollup = DailyRollup.build(
                day, source, traffic.get(key, DayTraffic()), usage.get(key, [])
            )
            result.append(rollup.to_wire())
        return result

    def _keep(self, rollups: list[dict[str, Any]], now: datetime) -> None:
        """Keep settled days' ``rollups`` (without ``source``); a failed write is only logged
        (the figures were computed, and a later read keeps them)."""
        if not rollups:
            return
        try:
            with self.context.storage.transaction() as uow:
                _store(uow, rollups, now)
        except DbUnavailable as exc:
            log.warning("could not keep %d settled days' rollups: %s", len(rollups), exc.message)

    # -- the daily rollup event ------------------------------------------------------------------

    def queue_completed_day_rollups(self, now: datetime | None = None) -> int:
        """Queue one ``analytics.daily_rollup`` event per completed UTC day not yet queued,
        from the day of the first call (stored), at most 92 per call; return how many. Each
        day is queued exactly once, however many runners call at once.
        """
        now = to_naive_utc(now) if now is not None else self.context.clock()
        today = now.date()
        with self.context.storage.transaction() as uow:
            start = date.fromisoformat(
                str(uow.settings.put_if_absent(ROLLUP_START_SETTING, today.isoformat(), at=now))
            )
            latest = uow.jobs.latest(ROLLUP_JOB_PREFIX)
        first = start
        if latest is not None:
            first = max(first, date.fromisoformat(latest[len(ROLLUP_JOB_PREFIX) :]) + timedelta(1))
        queued = 0
        day = first
        while day < today and queued < MAX_ROLLUP_DAYS:
            with self.context.storage.transaction() as uow:
                if uow.jobs.claim(ROLLUP_JOB_PREFIX + day.isoformat(), at=now):
                    (entry,) = self._rollups(uow, day, day)
                    queue_event(uow, self.context, "analytics.daily_rollup", entry)
                    queued += 1
            day += timedelta(days=1)
        return queued
