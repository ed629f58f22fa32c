"""``/admin/analytics``: the site's analytics over a range of days (``?from=&to=``, the last 30
days by default, at most 92): daily pageviews, unique visitors and sessions, link clicks and
average engagement (charts and the same figures as a table), the top pages and the LLM usage
by model over the range. One :meth:`~newsletter_connector.service.analytics.AnalyticsService.
rollups` read per request; its rules and messages are the export's, shown above the form (400).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import falcon

from ...errors import InvalidRequest
from ...service.analytics import MAX_ROLLUP_DAYS, TOP_PAGES
from ..charts import daily_lines
from ..params import date_param, reject_unknown_params
from .base import AdminPages
from .gate import signed_in
from .paths import ANALYTICS

#: The range shown without ``from`` and ``to``: the last 30 days, today included.
DEFAULT_DAYS = 30
#: The longest a date typed into the form is echoed back.
MAX_ECHO = 40


@dataclass
class ModelTotals:
    """One model's LLM calls over the range."""

    model: str
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class RangeSummary:
    """The range's totals, from the daily rollups."""

    pageviews: int = 0
    link_clicks: int = 0
    #: The mean of the daily averages, over the days with any engagement.
    avg_engagement_seconds: float | None = None
    #: Paths with their views summed over the range (each day's top pages), most viewed first.
    top_pages: list[tuple[str, int]] = field(default_factory=list)
    llm_models: list[ModelTotals] = field(default_factory=list)


def summarise(rollups: list[dict[str, Any]]) -> RangeSummary:
    """Totals of ``rollups`` (the wire shape of ``service.analytics.rollups``)."""
    views: Counter[str] = Counter()
    models: dict[str, ModelTotals] = {}
    averages = [r["avg_engagement_seconds"] for r in rollups]
    engaged = [a for a in averages if a is not None]
    for rollup in rollups:
        for page in rollup["top_pages"]:
            views[page["path"]] += page["views"]
        for usage in rollup["llm_usage"]["by_model"]:
            totals = models.setdefault(usage["model"], ModelTotals(usage["model"]))
            totals.calls += usage["calls"]
            totals.failures += usage["failures"]
            totals.prompt_tokens += usage["prompt_tokens"]
            totals.completion_tokens += usage["completion_tokens"]
    return RangeSummary(
        pageviews=sum(r["pageviews"] for r in rollups),
        link_clicks=sum(r["link_clicks"] for r in rollups),
        avg_engagement_seconds=round(sum(engaged) / len(engaged), 2) if engaged else None,
        top_pages=sorted(views.items(), key=lambda item: (-item[1], item[0]))[:TOP_PAGES],
        llm_models=sorted(models.values(), key=lambda m: (-m.calls, m.model)),
    )


class AnalyticsPage:
    """GET shows the range's analytics; a bad range re-shows the form with the error (400)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        today = self.pages.service.context.clock().date()
        typed = {name: str(req.get_param(name) or "")[:MAX_ECHO] for name in ("from", "to")}
        context: dict[str, Any] = {
            "current": "Analytics",
            "action_url": self.pages.url(ANALYTICS),
            "max_days": MAX_ROLLUP_DAYS,
        }
        try:
            from_date, to_date = _range(req, today)
            rollups = self.pages.service.analytics.kept_rollups(from_date, to_date)
        except InvalidRequest as error:
            self.pages.show(
                req,
                resp,
                admin,
                "analytics.html",
                status=falcon.HTTP_400,
                **context,
                error=error.message,
                error_field=error.field,
                from_value=typed["from"],
                to_value=typed["to"],
                rollups=None,
            )
            return
        self.pages.show(
            req,
            resp,
            admin,
            "analytics.html",
            **context,
            error=None,
            error_field=None,
            from_value=from_date.isoformat(),
            to_value=to_date.isoformat(),
            rollups=rollups,
            summary=summarise(rollups),
            traffic_chart=_traffic_chart(rollups, today),
            clicks_chart=_clicks_chart(rollups, today),
            today=today.isoformat(),
        )


def _range(req: falcon.Request, today: date) -> tuple[date, date]:
    """``from`` and ``to`` as the export reads them; neither given: the last 30 days."""
    reject_unknown_params(req, ("from", "to"))
    if not req.params:
        return today - timedelta(days=DEFAULT_DAYS - 1), today
    return date_param(req, "from"), date_param(req, "to")


def _days(rollups: list[dict[str, Any]]) -> list[date]:
    return [date.fromisoformat(r["date"]) for r in rollups]


def _span(rollups: list[dict[str, Any]]) -> str:
    first, last = rollups[0]["date"], rollups[-1]["date"]
    return f"each day from {first} to {last}"


def _traffic_chart(rollups: list[dict[str, Any]], today: date) -> str:
    return daily_lines(
        title="Pageviews, unique visitors and sessions per day",
        description=(
            f"Pageviews, unique visitors and sessions on {_span(rollups)}: "
            f"{sum(r['pageviews'] for r in rollups)} pageviews in all. "
            "The table below gives each day."
        ),
        days=_days(rollups),
        today=today,
        series={
            "Pageviews": [r["pageviews"] for r in rollups],
            "Unique visitors": [r["unique_visitors"] for r in rollups],
            "Sessions": [r["sessions"] for r in rollups],
        },
    )


def _clicks_chart(rollups: list[dict[str, Any]], today: date) -> str:
    return daily_lines(
        title="Link clicks per day",
        description=(
            f"Link clicks on {_span(rollups)}: {sum(r['link_clicks'] for r in rollups)} in all. "
            "The table below gives each day."
        ),
        days=_days(rollups),
        today=today,
        series={"Link clicks": [r["link_clicks"] for r in rollups]},
    )
