"""Errors raised before a page can answer: readers get the calm page in the site's layout;
the analytics capture endpoint (a JSON beacon) gets JSON."""

from __future__ import annotations

import secrets
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine


@pytest.fixture
def outage_client(newsletter_settings: Any) -> falcon.testing.TestClient:
    """The app on a database that does not answer (nothing listens on port 9)."""
    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    service = NewsletterService.build(settings, storage=storage)
    return falcon.testing.TestClient(create_app(service=service))


def test_unknown_page_is_the_friendly_404(newsletter_client: Any) -> None:
    result = newsletter_client.simulate_get("/no-such-page")
    assert result.status_code == 404
    assert result.headers["content-type"].startswith("text/html")
    assert "We can\u2019t find that page" in result.text
    assert "Test News" in result.text  # the site's layout, with its name
    assert "/assets/reader.css" in result.text
    assert "/no-such-page" not in result.text  # nothing technical is echoed


def test_wrong_method_on_a_page_is_a_friendly_405(newsletter_client: Any) -> None:
    result = newsletter_client.simulate_delete("/signup")
    assert result.status_code == 405
    assert "That didn\u2019t work" in result.text
    assert "GET" in result.headers["allow"]


def test_reader_page_during_an_outage_is_a_calm_503(outage_client: Any) -> None:
    # Token-shaped, so the page must ask the database (a malformed token is simply unknown).
    result = outage_client.simulate_get("/unsubscribe/" + secrets.token_urlsafe(24))
    assert result.status_code == 503
    assert result.headers["retry-after"]
    assert "We\u2019re having a problem right now" in result.text
    assert "Traceback" not in result.text and "nobody" not in result.text


def test_capture_endpoint_errors_are_json(outage_client: Any, newsletter_client: Any) -> None:
    body = (
        '{"type": "pageview", "visitor_id": "visitor-123", "session_id": "session-123", '
        '"path": "/"}'
    )
    down = outage_client.simulate_post(
        "/analytics/collect", body=body, headers={"Content-Type": "application/json"}
    )
    assert down.status_code == 503
    assert down.json["error"] == "db_unavailable"
    missing = newsletter_client.simulate_get("/analytics/nope")
    assert missing.status_code == 404
    assert missing.json["error"] == "not_found"
