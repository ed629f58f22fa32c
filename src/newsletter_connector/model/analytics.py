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
from .wire_safe import has_lone_surrogate, is_wire_scalar, wire_props, wire_text


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict sent on the wire."""
        return self.model_dump(mode="json")


class AnalyticsEvent(_Wire):
    """One captured event; ``props`` is ``None`` or a small flat object (no personal data).

    :meth:`from_record` makes any stored record encodable (``wire_safe``'s rules), so an odd
    stored row is served, never refused.
    """

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
            event_type=wire_text(event.event_type),
            visitor_id=wire_text(event.visitor_id),
            session_id=wire_text(event.session_id),
            path=wire_text(event.path),
            referrer=wire_text(event.referrer),
            props=wire_props(event.props),
        )


def _plain_text(value: Any) -> bool:
    return type(value) is str and not has_lone_surrogate(value)


def _plain_props(props: dict[str, Any]) -> bool:
    return type(props) is dict and all(
        _plain_text(key) and is_wire_scalar(value) for key, value in props.items()
    )


def event_wire(
    event: AnalyticsEventRecord, *, stamp: Callable[[dt.datetime], Any] = isoformat_z
) -> dict[str, Any]:
    """``AnalyticsEvent.from_record(event).to_wire()``, equal for every record, built without
    pydantic for the records capture stores (issue 10: validation cost four times the query).

    The direct path takes records whose values the model would keep as they are: an ``int``
    id, ``str`` texts without lone surrogates and ``props`` that are ``None``, empty or a flat
    dict of such texts, ``int``, ``bool``, ``None`` and finite floats (what
    ``analytics_sanitize`` lets in). Any other record goes through the model itself, which
    makes it encodable (``wire_safe``).

    :param stamp: makes ``occurred_at``'s value on the direct path; ``timeutil.utc_stamp``
        leaves a datetime for a page written by ``fast_json.dumps(..., stamps=True)``, which
        writes the very string the default makes.
    """
    props = event.props or None
    if (
        type(event.id) is not int
        or not _plain_text(event.event_type)
        or not _plain_text(event.visitor_id)
        or not _plain_text(event.session_id)
        or not _plain_text(event.path)
        or not _plain_text(event.referrer)
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
