"""The admin dashboard (``/admin``) and analytics page (``/admin/analytics``) over HTTP, on
SQLite and PostgreSQL: the figures shown, the ``days`` and date-range rules, an empty database
and the signed-out redirect."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

import falcon.testing
import pytest

from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin.analytics import summarise
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.app import create_app
from tests.support.admin import PASSWORD, get_page, sign_in
from tests.support.analytics_helpers import TOKEN, Clock, clocked_service, pageview
from tests.support.pages_helpers import text_of

NOW = datetime(2026, 3, 31, 15, 0)
CONSENT = {"source": "import", "collected_at": "2026-01-01T00:00:00Z"}

#: The table row of the clock's day: a day not over yet, marked as such.
TODAY_SO_FAR = "2026-03-31 (today, so far)"


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> tuple[Any, Clock]:
    service, clock = clocked_service(newsletter_settings, newsletter_storage, NOW)
    service.admin_access.create_user("ada", PASSWORD)
    return service, clock


@pytest.fixture
def client(clocked: tuple[Any, Clock]) -> Any:
    return falcon.testing.TestClient(create_app(service=clocked[0]))


@pytest.fixture
def session(client: Any) -> str:
    return sign_in(client)


#: The caption of the top pages table.
TOP_PAGES = "Views of each day's ten most viewed pages, added up over the range"


def _rows(html: str, caption: str) -> list[list[str]]:
    """The body rows (cell texts) of the table with ``caption``."""
    table = html.split(f">{caption}</caption>", 1)[1].split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [text_of(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in body.split("<tr>")[1:]
    ]


# -- dashboard --------------------------------------------------------------------------------


def test_dashboard_shows_the_figures_of_the_service(
    client: Any, clocked: tuple[Any, Clock], session: str
) -> None:
    service, clock = clocked
    clock.now = NOW - timedelta(days=2)
    service.subscribers.subscribe({"email": "p@example.org"})
    service.subscribers.subscribe({"email": "c@example.org", "consent": CONSENT})
    service.subscribers.subscribe({"email": "u@example.org", "consent": CONSENT})
    service.issues.run_digest("manual", "2026-03-29", sample_issue_content(subject="Spring news"))
    clock.now = NOW
    service.subscribers.unsubscribe("u@example.org")
    service.subscribers.subscribe({"email": "b@example.org"})
    service.subscribers.mark_bounced("b@example.org")

    page = get_page(client, "/admin", session)
    assert page.status_code == 200
    assert _rows(page.text, "Subscribers by status") == [
        ["Pending", "1"],
        ["Confirmed", "1"],
        ["Unsubscribed", "1"],
        ["Bounced", "1"],
    ]
    assert '<th scope="row">Total</th><td class="number">4</td>' in page.text
    days = _rows(page.text, "Signups, unsubscribes and bounces per day")
    assert len(days) == 30 and days[0][0] == "2026-03-02" and days[-1][0] == TODAY_SO_FAR
    assert ["2026-03-29", "3", "0", "0"] in days and days[-1] == [TODAY_SO_FAR, "1", "1", "1"]
    assert page.text.count('role="img"') == 1
    assert "Subscriber changes per day, last 30 days" in page.text
    assert "In all: signups 4, unsubscribes 1, bounces 1." in page.text
    assert "<script" not in page.text
    shown = text_of(page.text)
    assert "Subject Spring news Kind manual Date 2026-03-29" in shown
    assert "Connection Not connected" in shown
    assert f'<li><a href="{BASE}/admin/settings/api-keys">API keys</a></li>' in page.text
    assert f'<li><a href="{BASE}/admin/analytics">Analytics</a></li>' in page.text


def test_dashboard_switches_between_30_and_90_days(client: Any, session: str) -> None:
    for days in (30, 90):
        page = get_page(client, f"/admin?days={days}", session)
        assert page.status_code == 200
        assert len(_rows(page.text, "Signups, unsubscribes and bounces per day")) == days
        assert f'<a href="{BASE}/admin/?days={days}" aria-current="page">' in page.text
    default = get_page(client, "/admin/", session)
    assert 'days=30" aria-current="page"' in default.text
    assert f'<a href="{BASE}/admin/?days=90">Last 90 days</a>' in default.text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("days=7", "days must be 30 or 90"),
        ("days=365", "days must be 30 or 90"),
        ("days=abc", "days must be 30 or 90"),
        ("days=", "days must be 30 or 90"),
        ("days=30&days=90", "query parameter days may be given only once"),
        ("dayz=30", "unknown query parameter 'dayz'"),
    ],
)
def test_dashboard_refuses_other_days_with_a_400_page_naming_days(
    client: Any, session: str, query: str, message: str
) -> None:
    page = client.simulate_get("/admin", query_string=query, cookies={COOKIE_NAME: session})
    assert page.status_code == 400, page.text
    assert message in text_of(page.text)
    assert "Traceback" not in page.text
    assert "<h1>The dashboard cannot show that</h1>" in page.text


def test_dashboard_outbox_health_and_connection(
    client: Any, clocked: tuple[Any, Clock], session: str
) -> None:
    service, clock = clocked
    with service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://user:secret@platform.example.test:8443/base",
            transport="events",
            token=TOKEN,
            at=NOW - timedelta(days=3),
        )
    clock.now = NOW - timedelta(hours=3, minutes=5)
    service.subscribers.subscribe({"email": "p@example.org"})
    clock.now = NOW
    page = get_page(client, "/admin", session)
    shown = text_of(page.text)
    assert "Connection Configured: platform.example.test:8443 over events, since 2026-03-28" in (
        shown
    )
    assert "Events queued 1" in shown
    assert "Oldest pending event waiting 3 hours 5 minutes" in shown
    assert "Last successful delivery never" in shown
    assert "Batches waiting to retry 0" in shown and "Events failed 0" in shown
    assert "secret" not in page.text and TOKEN not in page.text


def test_dashboard_of_an_empty_database(client: Any, session: str) -> None:
    page = get_page(client, "/admin", session)
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "Total 0" in shown
    assert "No issue yet." in shown
    assert "Oldest pending event none pending" in shown
    days = _rows(page.text, "Signups, unsubscribes and bounces per day")
    assert all(row[1:] == ["0", "0", "0"] for row in days)


# -- analytics --------------------------------------------------------------------------------


def _traffic(service: Any, clock: Clock) -> None:
    clock.now = datetime(2026, 3, 30, 10, 0)
    pageview(service, "/story/a", "visitor1", session="session1")
    pageview(service, "/story/a", "visitor2", session="session2")
    pageview(service, "/story/b", "visitor2", session="session2")
    service.analytics.record_event(
        "link click", visitor_id="visitor1", session_id="session1", path="/story/a",
        href="https://elsewhere.example/x",
    )  # fmt: skip
    service.analytics.record_event(
        "engagement ping", visitor_id="visitor1", session_id="session1", path="/story/a", seconds=30
    )
    service.analytics.record_llm_usage("model-a", True, 100, 20)
    clock.now = datetime(2026, 3, 31, 9, 0)
    pageview(service, "/story/b", "visitor3", session="session3")
    service.analytics.record_event(
        "engagement ping", visitor_id="visitor3", session_id="session3", path="/story/b", seconds=10
    )
    service.analytics.record_llm_usage("model-a", False, 50, 0)
    service.analytics.record_llm_usage("model-b", True, 7, 3)
    clock.now = NOW


def test_analytics_shows_the_last_30_days_by_default(
    client: Any, clocked: tuple[Any, Clock], session: str
) -> None:
    _traffic(*clocked)
    page = get_page(client, "/admin/analytics", session)
    assert page.status_code == 200
    assert 'name="from" type="date" required value="2026-03-02"' in page.text
    assert 'name="to" type="date" required value="2026-03-31"' in page.text
    days = _rows(page.text, "Traffic per day")
    assert len(days) == 30
    assert days[-2] == ["2026-03-30", "3", "2", "2", "1", "30.0"]
    assert days[-1] == [TODAY_SO_FAR, "1", "1", "1", "0", "10.0"]
    assert days[0] == ["2026-03-02", "0", "0", "0", "0", "\u2013"]
    assert _rows(page.text, TOP_PAGES) == [
        ["/story/a", "2"],
        ["/story/b", "2"],
    ]
    assert _rows(page.text, "LLM calls and tokens by model over the range") == [
        ["model-a", "2", "1", "150", "20"],
        ["model-b", "1", "0", "7", "3"],
    ]
    shown = text_of(page.text)
    assert "Pageviews 4 Link clicks 1 Average engagement 20.0 seconds per page" in shown
    assert "<figcaption>Pageviews, unique visitors and sessions per day</figcaption>" in page.text
    assert "<figcaption>Link clicks per day</figcaption>" in page.text
    assert "<script" not in page.text


def test_analytics_over_a_chosen_range(
    client: Any, clocked: tuple[Any, Clock], session: str
) -> None:
    _traffic(*clocked)
    page = client.simulate_get(
        "/admin/analytics",
        query_string="from=2026-03-31&to=2026-03-31",
        cookies={COOKIE_NAME: session},
    )
    assert page.status_code == 200
    assert _rows(page.text, "Traffic per day") == [[TODAY_SO_FAR, "1", "1", "1", "0", "10.0"]]
    assert _rows(page.text, TOP_PAGES) == [["/story/b", "1"]]
    longest = client.simulate_get(
        "/admin/analytics",
        query_string="from=2026-01-01&to=2026-04-02",
        cookies={COOKIE_NAME: session},
    )
    assert longest.status_code == 200
    assert len(_rows(longest.text, "Traffic per day")) == 92


@pytest.mark.parametrize(
    ("query", "message", "field"),
    [
        ("from=2026-03-31&to=2026-03-01", "to must be on or after from", "to"),
        ("from=2026-01-01&to=2026-04-03", "from..to may span at most 92 days", "to"),
        (
            "from=2026-02-30&to=2026-03-01",
            "query parameter from is not a real calendar date",
            "from",
        ),
        (
            "from=31/03/2026&to=2026-03-31",
            "query parameter from must be a date as YYYY-MM-DD",
            "from",
        ),
        ("from=2026-03-01", "query parameter to is required (YYYY-MM-DD)", "to"),
        ("from=2026-03-01&to=2026-03-02&x=1", "unknown query parameter 'x'", "x"),
    ],
)
def test_analytics_bad_range_re_shows_the_form_with_the_export_message(
    client: Any, session: str, query: str, message: str, field: str
) -> None:
    page = client.simulate_get(
        "/admin/analytics", query_string=query, cookies={COOKIE_NAME: session}
    )
    assert page.status_code == 400
    assert f'<p class="error" role="alert" id="range-error">{message}</p>' in page.text.replace(
        "&#39;", "'"
    )
    assert '<form method="get"' in page.text and "Traffic per day" not in page.text
    if field in ("from", "to"):
        assert f'name="{field}" type="date" required value=' in page.text
        assert 'aria-invalid="true" aria-describedby="range-error"' in page.text
    typed = dict(pair.split("=") for pair in query.split("&"))
    assert f'value="{typed["from"]}"' in page.text


def test_analytics_of_an_empty_database(client: Any, session: str) -> None:
    page = get_page(client, "/admin/analytics", session)
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "No pageviews in this range." in shown and "No LLM calls in this range." in shown
    assert "Average engagement none recorded" in shown
    assert all(row[1:5] == ["0"] * 4 for row in _rows(page.text, "Traffic per day"))


def test_analytics_reads_the_rollups_once_per_request(
    client: Any, clocked: tuple[Any, Clock], session: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    analytics = clocked[0].analytics
    calls: list[tuple[date, date]] = []
    real = analytics.kept_rollups

    def counting(from_date: date, to_date: date) -> Any:
        calls.append((from_date, to_date))
        return real(from_date, to_date)

    monkeypatch.setattr(analytics, "kept_rollups", counting)
    assert get_page(client, "/admin/analytics", session).status_code == 200
    assert calls == [(date(2026, 3, 2), date(2026, 3, 31))]


def test_range_summary_sums_top_pages_and_models_over_the_days() -> None:
    def day(pages: list[tuple[str, int]], avg: float | None) -> dict[str, Any]:
        return {
            "pageviews": sum(v for _, v in pages),
            "link_clicks": 1,
            "avg_engagement_seconds": avg,
            "top_pages": [{"path": p, "views": v} for p, v in pages],
            "llm_usage": {"by_model": []},
        }

    many = [(f"/p{n:02d}", 1) for n in range(12)]
    summary = summarise([day([("/a", 3), *many], 10.0), day([("/b", 4), ("/a", 2)], None)])
    assert summary.top_pages[:3] == [("/a", 5), ("/b", 4), ("/p00", 1)]
    assert len(summary.top_pages) == 10
    assert summary.avg_engagement_seconds == 10.0
    assert (summary.pageviews, summary.link_clicks) == (21, 2)


# -- signed out -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/admin", "/admin/?days=90", "/admin/analytics"])
def test_signed_out_visitors_are_sent_to_the_login(client: Any, path: str) -> None:
    result = client.simulate_get(path)
    assert result.status_code == 303
    assert result.headers["location"] == BASE + "/admin/login"
