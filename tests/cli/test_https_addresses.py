"""Action links are https, and so is the platform address.

``serve``, ``sync``, ``digest`` and ``create_app`` refuse an unset or ``http://`` base_url unless
the development setting ``allow_insecure_http_links`` is on (``quickstart`` turns it on for its
own local address, and says so). ``platform_base`` is https in any letter case, never carries
credentials, and an address stored with credentials is never printed, logged or used.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.errors import InvalidRequest
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.events import queue_event
from newsletter_connector.settings import Settings, SettingsError
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support import sync_payloads as p
from tests.support.servers import running
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import free_port

pytestmark = pytest.mark.system

CLI = [sys.executable, "-m", "newsletter_connector"]
TOKEN = "platform-token-0123456789"
STATUS = "/api/newsletter/v1/status"
DEV_SETTING = "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS"
CREDENTIAL = "s3cr3t-pass"
USER = "platform-admin-7q"


@pytest.fixture
def receiver(tmp_path: Path) -> Any:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


@pytest.fixture
def env(newsletter_settings: Any, newsletter_storage: Any) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    environ.update(
        NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
        NEWSLETTER_DELIVERY_MODE="connector",
    )
    return environ


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60
    )


def assert_refused_for_links(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "NEWSLETTER_BASE_URL" in result.stderr
    assert "Traceback" not in result.stderr


# -- base_url: action links -----------------------------------------------------------------


@pytest.mark.parametrize("base_url", ["", "http://news.example.test", "HTTP://news.example.test"])
@pytest.mark.parametrize(
    "command",
    [
        ["serve", "--workers", "1"],
        ["sync", "--once"],
        ["digest", "--kind", "test"],
    ],
    ids=["serve", "sync", "digest"],
)
def test_commands_that_build_or_send_links_refuse_a_missing_or_http_base_url(
    env: dict[str, str],
    command: list[str],
    base_url: str,
    newsletter_service: Any,
    tmp_path: Path,
) -> None:
    if command[0] == "serve":
        command = [*command, "--bind", f"127.0.0.1:{free_port()}"]
    if command[0] == "digest":  # content at hand, so only the base_url can stop the run
        content = tmp_path / "content.json"
        content.write_text(json.dumps(sample_issue_content()), encoding="utf-8")
        command = [*command, "--content", str(content)]
    result = run({**env, "NEWSLETTER_BASE_URL": base_url}, *command)
    assert_refused_for_links(result)
    if base_url:
        assert "https://" in result.stderr and "allow_insecure_http_links" in result.stderr
    assert newsletter_service.issues.list() == []  # the digest recorded nothing


def test_serve_accepts_http_only_with_the_development_setting(env: dict[str, str]) -> None:
    env = {**env, "NEWSLETTER_BASE_URL": ""}
    assert_refused_for_links(run(env, "serve", "--bind", f"127.0.0.1:{free_port()}"))
    # No base_url at all: with the setting, serve defaults it to http://<bind>.
    with running(["serve", "--workers", "1"], env={**env, DEV_SETTING: "true"}, probe_path=STATUS):
        pass


def test_create_app_refuses_http_links_unless_allowed(newsletter_settings: Settings) -> None:
    insecure = newsletter_settings.model_copy(update={"base_url": "http://news.example.test"})
    with pytest.raises(SettingsError, match="allow_insecure_http_links"):
        create_app(insecure)
    unset = newsletter_settings.model_copy(update={"base_url": None})
    with pytest.raises(SettingsError, match="NEWSLETTER_BASE_URL"):
        create_app(unset)
    allowed = insecure.model_copy(update={"allow_insecure_http_links": True})
    client = falcon.testing.TestClient(create_app(allowed))
    assert client.simulate_get("/signup").status_code == 200


def test_an_https_base_url_in_capitals_is_https() -> None:
    settings = Settings.load({"NEWSLETTER_BASE_URL": "HTTPS://News.Example.test/letters/"})
    assert settings.base_url == "https://News.Example.test/letters"
    assert settings.require_https_links() == "https://News.Example.test/letters"


def test_a_base_url_with_credentials_is_refused_without_echoing_them() -> None:
    with pytest.raises(SettingsError, match="NEWSLETTER_BASE_URL") as refused:
        Settings.load({"NEWSLETTER_BASE_URL": f"https://editor:{CREDENTIAL}@news.example.test"})
    assert CREDENTIAL not in str(refused.value) and "editor" not in str(refused.value)


def test_quickstart_refuses_an_http_public_address(tmp_path: Path) -> None:
    """quickstart allows http only for the local address it serves itself."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    environ["NEWSLETTER_BASE_URL"] = "http://news.example.test"
    result = subprocess.run(
        [*CLI, "quickstart", "--bind", f"127.0.0.1:{free_port()}"],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_refused_for_links(result)


# -- platform_base --------------------------------------------------------------------------


def test_platform_base_scheme_is_case_insensitive(
    newsletter_service: NewsletterService, receiver: TlsReceiver, newsletter_settings: Settings
) -> None:
    with pytest.raises(InvalidRequest, match="https://"):
        newsletter_service.admin.set_connection(
            platform_base="HTTP://platform.example.test", transport="events", token=TOKEN
        )
    record = newsletter_service.admin.set_connection(
        platform_base=receiver.base.replace("https://", "HTTPS://"), transport="events", token=TOKEN
    )
    assert record.platform_base == receiver.base
    with newsletter_service.storage.transaction() as uow:
        queue_event(uow, newsletter_service.context, "contact.message", p.message())
    settings = newsletter_settings.model_copy(update={"ca_bundle": str(receiver.ca_file)})
    service = NewsletterService.build(settings, storage=newsletter_service.storage)
    report = SyncRunner(service, periodic_tasks=[]).run_once()
    assert report.delivered_events == 1 and len(receiver.received) == 1


@pytest.mark.parametrize(
    "address",
    [f"https://{USER}:{CREDENTIAL}@platform.example.test", f"https://{USER}@platform.example.test"],
)
def test_platform_base_with_credentials_is_refused_without_echoing_them(
    newsletter_service: NewsletterService, env: dict[str, str], address: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        newsletter_service.admin.set_connection(
            platform_base=address, transport="events", token=TOKEN
        )
    assert refused.value.field == "platform_base"
    assert USER not in str(refused.value) and CREDENTIAL not in str(refused.value)
    result = run(
        env, "connection", "set", "--platform-base", address, "--transport", "events", stdin=TOKEN
    )
    assert result.returncode == 1
    assert "platform_base" in result.stderr
    assert USER not in result.stderr + result.stdout
    assert newsletter_service.admin.connection() is None


def test_a_connection_stored_with_credentials_is_never_shown_or_used(
    newsletter_service: NewsletterService,
    newsletter_settings: Settings,
    env: dict[str, str],
    receiver: TlsReceiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A connection stored before the check existed, written straight to the store."""
    stored = receiver.base.replace("https://", f"https://{USER}:{CREDENTIAL}@")
    with newsletter_service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base=stored, transport="events", token=TOKEN, at=datetime(2026, 1, 1)
        )
        queue_event(uow, newsletter_service.context, "contact.message", p.message())
    record = newsletter_service.admin.connection()
    assert record is not None and record.platform_base == stored
    assert CREDENTIAL not in repr(record) and USER not in repr(record)

    shown = run(env, "connection", "show")
    assert shown.returncode == 0, shown.stderr
    assert f"platform_base: {receiver.base}" in shown.stdout
    assert CREDENTIAL not in shown.stdout + shown.stderr and USER not in shown.stdout

    settings = newsletter_settings.model_copy(update={"ca_bundle": str(receiver.ca_file)})
    service = NewsletterService.build(settings, storage=newsletter_service.storage)
    with caplog.at_level(logging.DEBUG):
        report = SyncRunner(service, periodic_tasks=[]).run_once()
    assert report.delivered_events == 0 and receiver.received == []
    assert "credentials" in caplog.text and CREDENTIAL not in caplog.text
    assert USER not in caplog.text
