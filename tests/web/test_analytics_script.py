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

from newsletter_connector import NewsletterService
from newsletter_connector.settings import Settings, SettingsError
from tests.support.analytics_helpers import client_for, clocked_service
from tests.support.paths import ROOT

SCRIPT = ROOT / "src" / "newsletter_connector" / "web" / "static" / "analytics.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the browser script")


def run_page(
    scenario: str, script: Path = SCRIPT, local: dict[str, str] | None = None
) -> dict[str, Any]:
    """One page running ``script`` in a new browser session whose ``localStorage`` holds
    ``local``: what it sent, and both storages after."""
    assert NODE is not None
    harness = str(ROOT / "tests" / "support" / "analytics_js_harness.js")
    result = subprocess.run(
        [NODE, harness, str(script), scenario, json.dumps(local or {})],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return dict(json.loads(result.stdout))


def run_script(scenario: str) -> list[dict[str, Any]]:
    return list(run_page(scenario)["sent"])


def served_script(settings: Any, storage: Any, folder: Path, visitor_id: str) -> Path:
    """The script as the app serves it under ``analytics_visitor_id = visitor_id``."""
    service = NewsletterService.build(
        settings.model_copy(update={"analytics_visitor_id": visitor_id}), storage=storage
    )
    served = client_for(service).simulate_get("/analytics.js")
    assert served.status_code == 200
    path = folder / f"analytics-{visitor_id}.js"
    path.write_bytes(served.content)
    return path


def visitor_ids(page: dict[str, Any]) -> set[str]:
    return {sent["body"]["visitor_id"] for sent in page["sent"]}


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


def test_persistent_ids_keep_the_visitor_across_browser_sessions(
    newsletter_settings: Any, newsletter_storage: Any, tmp_path: Path
) -> None:
    script = served_script(newsletter_settings, newsletter_storage, tmp_path, "persistent")
    assert script.read_bytes() == SCRIPT.read_bytes()  # the default serves the shipped script
    first = run_page("normal", script)
    (visitor,) = visitor_ids(first)
    assert first["localStorage"] == {"nc_visitor_id": visitor}
    assert set(first["sessionStorage"]) == {"nc_session_id"}
    later = run_page("normal", script, first["localStorage"])  # the same browser, another day
    assert visitor_ids(later) == {visitor}
    assert later["sent"][0]["body"]["session_id"] != first["sent"][0]["body"]["session_id"]


def test_session_ids_store_nothing_lasting_and_change_each_browser_session(
    newsletter_settings: Any, newsletter_storage: Any, tmp_path: Path
) -> None:
    script = served_script(newsletter_settings, newsletter_storage, tmp_path, "session")
    left_before = {"nc_visitor_id": "persistent-id-from-before", "site-own-key": "kept"}
    first = run_page("normal", script, left_before)
    (visitor,) = visitor_ids(first)
    assert visitor != "persistent-id-from-before"
    assert first["localStorage"] == {"site-own-key": "kept"}  # the old persistent id is gone
    assert first["sessionStorage"]["nc_visitor_id"] == visitor
    assert len(first["sent"]) == 3 and {s["body"]["session_id"] for s in first["sent"]} == {
        first["sessionStorage"]["nc_session_id"]
    }
    later = run_page("normal", script, first["localStorage"])
    (next_visitor,) = visitor_ids(later)
    assert next_visitor != visitor
    assert run_page("nostorage", script)["sent"]  # blocked storage still measures the page
    assert run_page("dnt", script)["sent"] == []


def test_an_unknown_visitor_id_mode_names_the_setting() -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.load({"NEWSLETTER_ANALYTICS_VISITOR_ID": "forever", "NEWSLETTER_CONFIG": ""})
    message = str(raised.value)
    assert "analytics_visitor_id" in message and "NEWSLETTER_ANALYTICS_VISITOR_ID" in message
    assert "persistent" in message and "session" in message
