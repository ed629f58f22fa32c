"""A platform posts its feedback to a running server (``newsletter-connector serve``, gunicorn)
over real HTTP: each report twice, as a retrying platform would."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support.analytics_helpers import connect
from tests.support.servers import running
from tests.support.subscriber_helpers import outbox

pytestmark = pytest.mark.system

CONSENT = {"source": "import", "collected_at": "2026-02-01T10:00:00Z"}
REPORTS = [
    {"id": "b-1", "type": "bounce", "email": "bounce@example.org", "reason": "550 5.1.1"},
    {"id": "c-1", "type": "complaint", "email": "complaint@example.org", "reason": "spam"},
    {"id": "u-1", "type": "unsubscribe", "email": "unsubscribe@example.org"},
]


def test_bounce_complaint_and_unsubscribe_posted_twice_leave_one_event_each(
    newsletter_settings: Any, newsletter_service: Any
) -> None:
    for report in REPORTS:
        newsletter_service.subscribers.subscribe({"email": report["email"], "consent": CONSENT})
    auth = connect(newsletter_service)
    before = len(outbox(newsletter_service))
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
    }
    with running(["serve", "--workers", "2"], env=env) as (base, _process):
        for _attempt in range(2):
            for report in REPORTS:
                body = [{**report, "occurred_at": "2026-11-25T08:00:00Z"}]
                answer = httpx.post(f"{base}/api/export/feedback", json=body, headers=auth)
                assert answer.status_code == 200, answer.text
        # The whole batch once more, as one request.
        again = httpx.post(
            f"{base}/api/export/feedback",
            json=[{**report, "occurred_at": "2026-11-25T08:00:00Z"} for report in REPORTS],
            headers=auth,
        )
        assert [r["outcome"] for r in again.json()["results"]] == ["duplicate"] * 3
    statuses = {
        report["email"]: newsletter_service.subscribers.get(report["email"]).status
        for report in REPORTS
    }
    assert statuses == {
        "bounce@example.org": "bounced",
        "complaint@example.org": "unsubscribed",
        "unsubscribe@example.org": "unsubscribed",
    }
    queued = [(e["type"], e["payload"]["email"]) for e in outbox(newsletter_service)[before:]]
    assert sorted(queued) == [
        ("newsletter.bounced", "bounce@example.org"),
        ("newsletter.unsubscribed", "complaint@example.org"),
        ("newsletter.unsubscribed", "unsubscribe@example.org"),
    ]
    reasons = [newsletter_service.feedback.about(r["email"]).items[0].reason for r in REPORTS]
    assert reasons == ["550 5.1.1", "spam", None]
