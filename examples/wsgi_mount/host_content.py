"""The host's issue content plugin: digests are built from the host's own articles.

A plugin may be any object; this one is an instance holding the host's database engine, so
the hook can read ``host_articles``. Register it with ``create_app(plugins=[HostContent(engine)])``.
"""

from __future__ import annotations

from datetime import date as Date
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from newsletter_connector import hookimpl

from .host_db import host_articles

SECTION_LABELS = {
    "health": "Health",
    "benefits": "Benefits",
    "money": "Money",
    "housing": "Housing",
    "caregiving": "Caregiving",
    "technology": "Technology",
    "travel": "Travel",
    "food": "Food",
}


class HostContent:
    """``newsletter_issue_content`` from ``host_articles``: a daily issue carries the articles
    published that day, a weekly one those of the seven days ending that day. ``None`` (no
    articles) lets another plugin answer."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @hookimpl
    def newsletter_issue_content(
        self, kind: str, date: str, settings: Any
    ) -> dict[str, Any] | None:
        last = Date.fromisoformat(date)
        first = last - timedelta(days=6) if kind == "weekly" else last
        query = (
            select(host_articles)
            .where(host_articles.c.published_on.between(first.isoformat(), last.isoformat()))
            .order_by(host_articles.c.published_on.desc(), host_articles.c.id)
            .limit(50)
        )
        with self.engine.connect() as connection:
            articles = list(connection.execute(query).mappings())
        if not articles:
            return None
        topics: dict[str, dict[str, Any]] = {}
        for article in articles:
            topic = topics.setdefault(
                article["section"],
                {
                    "slug": article["section"],
                    "label": SECTION_LABELS.get(article["section"], article["section"].title()),
                    "summary": article["summary"],
                    "items": [],
                },
            )
            topic["items"].append(
                {"title": article["title"], "url": article["url"], "source": settings.site_name}
            )
        lead = articles[0]
        return {
            "briefing": {"date": date, "title": lead["title"], "url": lead["url"]},
            "on_this_day": [],
            "puzzle_hint": "Today's word is hidden in the first headline.",
            "topics": list(topics.values()),
        }
