"""The sync runner's scheduled digests follow the ``scheduled_digests`` setting: ``auto`` runs
them only with an issue content plugin (saying once that they are off otherwise), ``on``
refuses to start without one, ``off`` never runs them."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import pytest
from click.testing import CliRunner

from examples.content_plugin import newsletter_content
from newsletter_connector.cli import cli
from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.service import NewsletterService
from newsletter_connector.settings import SettingsError
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.testing.issue_samples import sample_issue_content

DUE = datetime(2026, 11, 23, 11, 0)  # a Monday after 10:00 UTC: daily and weekly are due
OFF_LINE = "scheduled digests are off: no issue content plugin is installed"


class CountingContent:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        self.calls.append((kind, date))
        return sample_issue_content()


def build(settings: Any, storage: Any, *plugins: Any, mode: str = "auto") -> NewsletterService:
    return NewsletterService.build(
        settings.model_copy(update={"scheduled_digests": mode}),
        storage=storage,
        plugins=plugins,
        clock=lambda: DUE,
    )


def recorded(service: NewsletterService) -> list[tuple[str, str]]:
    return sorted((r.kind, r.issue_date) for r in service.issues.list(10))


def test_auto_without_a_content_plugin_says_so_once_and_logs_no_error(
    newsletter_settings: Any, newsletter_storage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    service = build(newsletter_settings, newsletter_storage)
    caplog.set_level(logging.INFO)
    runner = SyncRunner(service)
    reports = [runner.run_once() for _ in range(3)]
    runner.close()
    assert [r.task_errors for r in reports] == [0, 0, 0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [w for w in warnings if not w.startswith("no platform connection")] == []
    off = [r for r in caplog.records if OFF_LINE in r.getMessage()]
    assert [r.levelname for r in off] == ["INFO"]
    assert "docs/issues.md#scheduling" in off[0].getMessage()
    assert recorded(service) == []


def test_auto_with_the_example_content_plugin_records_the_due_digests(
    newsletter_settings: Any, newsletter_storage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    service = build(newsletter_settings, newsletter_storage, newsletter_content)
    caplog.set_level(logging.INFO)
    runner = SyncRunner(service)
    assert runner.run_once().task_errors == 0
    assert runner.run_once().task_errors == 0  # once per period
    runner.close()
    assert recorded(service) == [("daily", "2026-11-23"), ("weekly", "2026-11-23")]
    latest = service.issues.latest()
    assert "Test News: High-dose flu shots" in latest.subject  # built by the example plugin
    assert not [r for r in caplog.records if OFF_LINE in r.getMessage()]


def test_on_without_a_content_plugin_refuses_to_start(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service = build(newsletter_settings, newsletter_storage, mode="on")
    with pytest.raises(SettingsError, match="NEWSLETTER_SCHEDULED_DIGESTS") as raised:
        SyncRunner(service)
    assert "no issue content plugin" in str(raised.value)


def test_on_with_a_content_plugin_records_the_due_digests(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    plugin = CountingContent()
    service = build(newsletter_settings, newsletter_storage, plugin, mode="on")
    SyncRunner(service).run_once()
    assert sorted(plugin.calls) == [("daily", "2026-11-23"), ("weekly", "2026-11-23")]
    assert len(recorded(service)) == 2


def test_off_with_a_content_plugin_schedules_nothing(
    newsletter_settings: Any, newsletter_storage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    plugin = CountingContent()
    service = build(newsletter_settings, newsletter_storage, plugin, mode="off")
    caplog.set_level(logging.INFO)
    runner = SyncRunner(service)
    for _ in range(2):
        runner.run_once()
    runner.close()
    assert plugin.calls == []
    assert recorded(service) == []
    assert not [r for r in caplog.records if OFF_LINE in r.getMessage()]  # chosen, not missing


def test_sync_command_with_on_and_no_content_plugin_exits_1(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": "scheduled-digests-test-secret",
        "NEWSLETTER_SCHEDULED_DIGESTS": "on",
        "NEWSLETTER_CONFIG": "",
    }
    result = CliRunner().invoke(cli, ["sync", "--once"], env=env)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: setting scheduled_digests")
    assert "no issue content plugin" in result.stderr
    assert "delivered" not in result.stdout


def test_an_unknown_mode_is_a_settings_error(newsletter_settings: Any) -> None:
    from newsletter_connector.settings import Settings

    with pytest.raises(SettingsError, match="scheduled_digests"):
        Settings.load({"NEWSLETTER_SCHEDULED_DIGESTS": "sometimes"}, config_file=None)
