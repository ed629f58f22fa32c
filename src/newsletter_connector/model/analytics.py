"""Wire models of the export surface: the analytics event and daily rollup
(docs/export.md, "For the platform"), the single serializers of those shapes (export endpoints
and ``analytics.daily_rollup``)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..storage.records import AnalyticsEventRecord, DayTraffic, ModelUsage
from ..timeutil import to_naive_utc
from .wire_safe import wire_props, wire_text


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict sent on the wire."""
        return self.model_dump(mode="json")


def event_wire(event: AnalyticsEventRecord) -> dict[str, Any]:
    """One captured event (docs/export.md, "GET /api/export/events"); ``props`` is ``None`` or a
    small object (no personal data). Any stored record is made encodable (``wire_safe``'s rules), so
    an odd stored row is served, never refused; ``occurred_at`` is a naive UTC datetime for the
    encoder to write."""
    return {
        "id": int(event.id),
        "occurred_at": to_naive_utc(event.occurred_at),
        "event_type": wire_text(event.event_type),
        "visitor_id": wire_text(event.visitor_id),
        "session_id": wire_text(event.session_id),
        "path": wire_text(event.path),
        "referrer": wire_text(event.referrer),
        "props": wire_props(event.props),
    }


class TopPage(_Wire):
    path: str
    views: int


class ModelUsageEntry(_Wire):
    model: str
    calls: int
    failures: int
    prompt_tokens: int
    completion_tokens: int


class LlmUsage(_Wire):
    calls: int
    failures: int
    by_model: list[ModelUsageEntry]


class DailyRollup(_Wire):
    """One UTC day's figures; a quiet day has zeros, empty lists and a ``null`` average."""

    date: str
    source: str
    pageviews: int
    unique_visitors: int
    new_visitors: int
    sessions: int
    issue_number: int
    top_pages: list[TopPage]
    link_clicks: int
    avg_engagement_seconds: float | None
    llm_usage: LlmUsage
    ga4: None = None

    @classmethod
    def build(
        cls, day: dt.date, source: str, traffic: DayTraffic, usage: list[ModelUsage]
    ) -> DailyRollup:
        avg = traffic.avg_engagement_seconds
        if avg is not None and not math.isfinite(avg):
            avg = None  # a stored NaN or infinity has no JSON form
        return cls(
            date=day.isoformat(),
            source=source,
            pageviews=traffic.pageviews,
            unique_visitors=traffic.unique_visitors,
            new_visitors=traffic.new_visitors,
            sessions=traffic.sessions,
            issue_number=traffic.issues,
            top_pages=[
                TopPage(path=wire_text(path), views=views) for path, views in traffic.top_pages
            ],
            link_clicks=traffic.link_clicks,
            avg_engagement_seconds=None if avg is None else round(avg, 2),
            llm_usage=LlmUsage(
                calls=sum(m.calls for m in usage),
                failures=sum(m.failures for m in usage),
                by_model=[ModelUsageEntry.model_validate(m, from_attributes=True) for m in usage],
            ),
        )
