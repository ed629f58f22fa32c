"""The admin dashboard and analytics pages in a real browser (headless Chromium, JavaScript
off, the app served by gunicorn): sign in, open both pages, switch the dashboard's range and
the analytics dates, and audit each page with axe-core (no violation of any impact). With
``NEWSLETTER_WRITE_SCREENSHOTS=1`` it saves ``docs/images/admin/dashboard.png`` and
``analytics.png`` for docs/admin.md. FAILS, never skips, when Chromium is missing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab, sign_in
from tests.web.admin.test_admin_browser import _audit, site

pytestmark = pytest.mark.system

__all__ = ["site"]  # the fixture this module's test uses

CONSENT = {"source": "import", "collected_at": "2026-01-01T00:00:00Z"}


def _seed(service: Any) -> None:
    """A few subscribers, pageviews, clicks and LLM calls of today, for figures to show."""
    for n in range(6):
        service.subscribers.subscribe({"email": f"reader{n}@example.org", "consent": CONSENT})
    service.subscribers.subscribe({"email": "pending@example.org"})
    service.subscribers.unsubscribe("reader0@example.org")
    for n, path in enumerate(["/", "/story/garden", "/story/garden", "/story/bridge"]):
        visitor = f"visitor{n % 3:04d}"
        service.analytics.record_event(
            "pageview", visitor_id=visitor, session_id=f"session{n % 3:04d}", path=path
        )
    service.analytics.record_event(
        "link click", visitor_id="visitor0000", session_id="session0000", path="/story/garden",
        href="https://elsewhere.example/",
    )  # fmt: skip
    service.analytics.record_event(
        "engagement ping", visitor_id="visitor0000", session_id="session0000",
        path="/story/garden", seconds=42,
    )  # fmt: skip
    service.analytics.record_llm_usage("example-model", True, 1200, 300)
    service.runner_status.beat()  # a runner at work, as on a running site


#: Each chart's texts as drawn: the smallest font size in CSS pixels, the texts that reach
#: past the chart's own box (cut off), and the pairs on one line that overlap.
_CHART_TEXTS = """() => [...document.querySelectorAll('figure.chart svg')].map((svg) => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim());
  const rects = texts.map((t) => [t.textContent, t.getBoundingClientRect()]);
  const overlapping = [];
  for (const [a, ra] of rects) {
    for (const [b, rb] of rects) {
      const sameLine = Math.abs(ra.top - rb.top) < 2 && a < b;
      if (sameLine && ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5) {
        overlapping.push([a, b]);
      }
    }
  }
  return {
    smallest: Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
    cut: rects.filter(([, r]) => r.left < box.left - 0.5 || r.right > box.right + 0.5)
      .map(([text]) => text),
    overlapping,
  };
})"""


def _charts_readable(page: Any) -> None:
    """At a phone's and a desktop's width, every chart's text is at least 12 px, none is cut
    off at the chart's edge, and no two on one line overlap."""
    width = page.viewport_size["width"]
    for viewport in (390, 1280):
        page.set_viewport_size({"width": viewport, "height": 900})
        charts = page.evaluate(_CHART_TEXTS)
        assert charts, "no chart"
        for chart in charts:
            assert chart["smallest"] >= 12, (viewport, chart)
            assert chart["cut"] == [] and chart["overlapping"] == [], (viewport, chart)
    page.set_viewport_size({"width": width, "height": 900})


def test_dashboard_and_analytics_in_a_browser(
    browser: Any, site: str, newsletter_service: Any
) -> None:
    newsletter_service.admin_access.create_user("ada", PASSWORD)
    _seed(newsletter_service)
    with scriptless_tab(browser) as page:
        sign_in(page, site)
        assert page.get_by_role("row", name="Confirmed 5").count() == 1
        assert page.get_by_role("img", name="Subscriber changes per day, last 30 days").count()
        _charts_readable(page)
        _audit(browser, page, "dashboard")

        page.get_by_role("link", name="Last 90 days").click()
        assert page.url.endswith("/admin/?days=90")
        assert page.get_by_role("img", name="Subscriber changes per day, last 90 days").count()
        _audit(browser, page, "dashboard-90", screenshot=False)

        page.get_by_role("navigation", name="Admin").get_by_role("link", name="Analytics").click()
        assert page.locator("h1").inner_text() == "Analytics"
        assert page.get_by_role("row", name="/story/garden 2").count() == 1
        assert page.get_by_role("row", name="example-model 1 0 1,200 300").count() == 1
        _charts_readable(page)
        _audit(browser, page, "analytics")

        today = newsletter_service.context.clock().date()
        page.get_by_label("From", exact=True).fill((today + timedelta(days=1)).isoformat())
        page.get_by_label("To", exact=True).fill(today.isoformat())
        page.get_by_role("button", name="Show").click()
        assert page.get_by_role("alert").inner_text() == "to must be on or after from"
        _audit(browser, page, "analytics-error", screenshot=False)
