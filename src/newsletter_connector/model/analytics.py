"""Wire models of the export surface: the analytics event (SPEC 2.5) and daily rollup (2.6).

These are the single serializers of those shapes: ``/api/export/events``, ``/api/export/rollups``
and the ``analytics.daily_rollup`` event payload all go through them.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..storage import AnalyticsEventRecord, DayTraffic, ModelUsage
from ..timeutil import isoformat_z


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict sent on the wire."""
        return self.model_dump(mode="json")


class AnalyticsEvent(_Wire):
    """One captured event; ``props`` is ``None`` or a small flat object (no personal data)."""

    id: int
    occurred_at: str
    event_type: str
    visitor_id: str
    session_id: str
    path: str
    referrer: str
    props: dict[str, Any] | None

    @classmethod
    def from_record(cls, event: AnalyticsEventRecord) -> AnalyticsEvent:
        return cls(
            id=event.id,
            occurred_at=isoformat_z(event.occurred_at) or "",
            event_type=event.event_type,
            visitor_id=event.visitor_id,
            session_id=event.session_id,
            path=event.path,
            referrer=event.referrer,
            props=event.props or None,
        )


#: Prop value types that pydantic's JSON dump (``mode="json"``) returns unchanged (floats too,
#: when finite: it turns NaN and infinities into ``None``).
_PLAIN_PROP_TYPES = frozenset({str, int, bool, type(None)})


def _plain_props(props: dict[str, Any]) -> bool:
    return type(props) is dict and all(
        type(key) is str
        and (type(value) in _PLAIN_PROP_TYPES or (type(value) is float and math.isfinite(value)))
        for key, value in props.items()
    )


def event_wire(
    event: AnalyticsEventRecord, *, stamp: Callable[[dt.datetime], Any] = isoformat_z
) -> dict[str, Any]:
    """``AnalyticsEvent.from_record(event).to_wire()``, equal for every record, built without
    pydantic for the records capture stores (issue 10: validation cost four times the query).

    The direct path takes records whose values the model would keep as they are: an ``int``
    id, ``str`` texts and ``props`` that are ``None``, empty or a flat dict of ``str``, ``int``,
    ``bool``, ``None`` and finite floats (what ``analytics_sanitize`` lets in). Any other
    record goes through the model itself, which converts or refuses it.

    :param stamp: makes ``occurred_at``'s value on the direct path; ``timeutil.utc_stamp``
        leaves a datetime for a page written by ``fast_json.dumps(..., stamps=True)``, which
        writes the very string the default makes.
    """
    props = event.props or None
    if (
        type(event.id) is not int
        or type(event.event_type) is not str
        or type(event.visitor_id) is not str
        or type(event.session_id) is not str
        or type(event.path) is not str
        or type(event.referrer) is not str
        or (props is not None and not _plain_props(props))
    ):
        return AnalyticsEvent.from_record(event).to_wire()
    return {
        "id": event.id,
        "occurred_at": stamp(event.occurred_at) or "",
        "event_type": event.event_type,
        "visitor_id": event.visitor_id,
        "session_id": event.session_id,
        "path": event.path,
        "referrer": event.referrer,
        "props": None if props is None else dict(props),
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
        return cls(
            date=day.isoformat(),
            source=source,
            pageviews=traffic.pageviews,
            unique_visitors=traffic.unique_visitors,
            new_visitors=traffic.new_visitors,
            sessions=traffic.sessions,
            issue_number=traffic.issues,
            top_pages=[TopPage(path=path, views=views) for path, views in traffic.top_pages],
            link_clicks=traffic.link_clicks,
            avg_engagement_seconds=None if avg is None else round(avg, 2),
            llm_usage=LlmUsage(
                calls=sum(m.calls for m in usage),
                failures=sum(m.failures for m in usage),
                by_model=[
                    ModelUsageEntry(
                        model=m.model,
                        calls=m.calls,
                        failures=m.failures,
                        prompt_tokens=m.prompt_tokens,
                        completion_tokens=m.completion_tokens,
                    )
                    for m in usage
                ],
            ),
        )
