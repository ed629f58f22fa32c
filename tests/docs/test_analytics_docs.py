"""The runnable examples of docs/analytics.md work as written."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import pytest

from tests.support.analytics_helpers import client_for, clocked_service
from tests.support.docblocks import run_block, settings_environment
from tests.support.paths import ROOT

DOCS = ROOT / "docs"


def doc_block(page: str, name: str) -> str:
    """The fenced code block preceded by ``<!-- block: name -->`` in ``docs/page``."""
    text = (DOCS / page).read_text()
    match = re.search(rf"<!-- block: {re.escape(name)} -->\n```\w*\n(.*?)\n```", text, re.S)
    assert match, f"no block {name} in {page}"
    return match.group(1)


def test_collect_body_example_is_accepted(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service, _ = clocked_service(newsletter_settings, newsletter_storage, datetime(2026, 11, 21))
    body = doc_block("analytics.md", "analytics-collect-body")
    result = client_for(service).simulate_post(
        "/analytics/collect", body=body, headers={"Content-Type": "application/json"}
    )
    assert result.status_code == 204
    (event,) = service.analytics.events_page(0, 10).events
    assert event.props == {"section": "local", "href": json.loads(body)["href"]}


def test_llm_usage_example_runs(
    newsletter_settings: Any, newsletter_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_environment(monkeypatch, newsletter_settings)
    namespace = run_block("analytics-llm-usage")
    try:
        assert namespace["rollup"]["llm_usage"]["calls"] == 2
    finally:
        namespace["service"].close()
