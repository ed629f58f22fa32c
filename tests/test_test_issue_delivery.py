"""A ``test`` issue never reaches readers: on the ``platform`` transport it is never sent to
the newsletter-issue endpoint (which mails or schedules an issue), while a daily issue is; it
stays on the site, through ``GET /issues`` and ``digest --preview``. Real processes, a real
TLS receiver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.plugins.platform_transport import ISSUE_PATH
from newsletter_connector.testing.issue_samples import sample_issue_content

from .tls_receiver import TlsReceiver

TOKEN = "platform-token-0123456789"
CLI = [sys.executable, "-m", "newsletter_connector"]


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


@pytest.fixture
def env(newsletter_settings: Any, receiver: TlsReceiver) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    environ.update(
        NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
        NEWSLETTER_DELIVERY_MODE="connector",
        SSL_CERT_FILE=str(receiver.ca_file),
    )
    return environ


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return result


def test_platform_transport_never_sends_a_test_issue_but_keeps_it_on_the_site(
    newsletter_service: Any,
    newsletter_settings: Any,
    env: dict[str, str],
    receiver: TlsReceiver,
    auth: dict[str, str],
    tmp_path: Path,
) -> None:
    newsletter_service.admin.set_connection(
        platform_base=receiver.base, transport="platform", token=TOKEN
    )
    content = tmp_path / "content.json"
    content.write_text(json.dumps(sample_issue_content()), encoding="utf-8")
    preview = tmp_path / "test-issue.html"

    tested = run(
        env, "digest", "--kind", "test", "--content", str(content), "--preview", str(preview)
    )
    assert "never" in tested.stdout and "readers" in tested.stdout
    run(env, "digest", "--kind", "daily", "--date", "2026-11-21", "--content", str(content))
    synced = run(env, "sync", "--once")
    assert "delivered 2 event(s)" in synced.stdout

    issue_pushes = [r.body for r in receiver.received if r.path == ISSUE_PATH]
    daily, test_issue = newsletter_service.issues.list(include_html=True)  # newest first
    assert test_issue.kind == "test" and daily.kind == "daily"
    assert [push["subject"] for push in issue_pushes] == [daily.subject]
    assert not any(test_issue.subject in json.dumps(r.body) for r in receiver.received)
    assert "settled without a request" in synced.stderr  # the runner says what became of it

    # The test issue is still there for the operator to look at.
    client = falcon.testing.TestClient(create_app(newsletter_settings))
    listed = client.simulate_get("/api/newsletter/v1/issues", headers=auth).json
    assert test_issue.subject in [issue["subject"] for issue in listed["data"]]
    assert preview.read_text(encoding="utf-8") == test_issue.html

    # Nothing is left waiting: the test issue's event is settled, not queued forever.
    status = run(env, "outbox", "status").stdout
    assert "undelivered events: 0" in status
