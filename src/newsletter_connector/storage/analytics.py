"""The analytics repositories: events and first sightings, LLM usage of digest runs, and
settled days' kept rollups. Always the built-in tables."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Protocol

from .records import AnalyticsEventRecord, DayTraffic, ModelUsage


class AnalyticsRepository(Protocol):
    """Analytics events and first sightings of visitors; aggregates computed by the backend."""

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

    def events_after(self, after_id: int, limit: int) -> list[AnalyticsEventRecord]:
        """At most ``limit`` events with id above ``after_id``, by id."""

    def daily_traffic(
        self, start: datetime, end: datetime, *, top_pages: int
    ) -> dict[str, DayTraffic]:
        """Per UTC day (``YYYY-MM-DD``) in ``[start, end)``, its aggregates (a day without any
        event, visitor or issue may be absent). Each day's top list holds at most ``top_pages``
        paths, by views descending then path; ``issues`` counts issues recorded that day, kind
        ``test`` excluded."""


class LlmUsageRepository(Protocol):
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

    def daily_usage(self, start: datetime, end: datetime) -> dict[str, list[ModelUsage]]:
        """Per UTC day in ``[start, end)``, usage by model ordered by model name."""


class DayRollupRepository(Protocol):
    """Settled days' analytics rollups, kept so the admin pages need not compute them again."""

    def kept(self, first: date, last: date) -> dict[date, dict[str, Any]]:
        """The kept figures of each day from ``first`` to ``last`` inclusive that has them."""

    def keep(self, day: date, figures: dict[str, Any], *, at: datetime) -> None:
        """Keep ``figures`` (JSON-ready) for ``day``, unless figures are already kept for it
        (racing writers keep the first; a settled day's figures are the same for all)."""
