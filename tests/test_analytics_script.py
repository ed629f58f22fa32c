"""analytics.js, run in Node with a minimal browser stand-in: what it sends is what the collect
endpoint accepts, with no query strings and no cookies."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from .support.analytics_helpers import client_for, clocked_service

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "src" / "newsletter_connector" / "web" / "static" / "analytics.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the browser script")


def run_script(scenario: str) -> list[dict[str, Any]]:
    assert NODE is not None
    result = subprocess.run(
        [NODE, str(HERE / "analytics_js_harness.js"), str(SCRIPT), scenario],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return list(json.loads(result.stdout))


def test_script_sends_pageview_click_and_ping_that_are_accepted(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    sent = run_script("normal")
    assert {s["url"] for s in sent} == {"https://news.example.test/newsletter/analytics/collect"}
    bodies = [s["body"] for s in sent]
    assert [b["type"] for b in bodies] == ["pageview", "link click", "engagement ping"]
    assert bodies[0]["referrer"] == "https://search.example/results"
    assert bodies[1]["href"] == "https://elsewhere.example/page"
    assert bodies[2]["seconds"] == 12
    assert len({b["visitor_id"] for b in bodies}) == 1
    assert len({b["session_id"] for b in bodies}) == 1
    assert bodies[0]["visitor_id"] != bodies[0]["session_id"]

    service, _ = clocked_service(newsletter_settings, newsletter_storage, datetime(2026, 1, 1))
    client = client_for(service)
    for body in bodies:
        result = client.simulate_post(
            "/analytics/collect", body=json.dumps(body),
            headers={"Content-Type": "text/plain;charset=UTF-8"},
        )  # fmt: skip
        assert result.status_code == 204, result.text
    assert len(service.analytics.events_page(0, 10).events) == 3


def test_script_sends_nothing_under_do_not_track() -> None:
    assert run_script("dnt") == []


def test_script_works_without_storage() -> None:
    sent = run_script("nostorage")
    assert [s["body"]["type"] for s in sent] == ["pageview", "link click", "engagement ping"]
