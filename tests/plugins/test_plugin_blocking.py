"""The ``blocked_plugins`` setting: named plugins, built-in or installed, are never registered
(an installed one is not even imported); an unknown name, or blocking the plugin a setting
relies on, stops start-up with a message saying what to fix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest
from click.testing import CliRunner

from newsletter_connector import plugin_manager
from newsletter_connector.cli import cli
from newsletter_connector.errors import PluginNotFound
from newsletter_connector.service import NewsletterService
from newsletter_connector.settings import Settings
from newsletter_connector.web.app import create_app
from tests.support.docblocks import docblock

PLATFORM = "newsletter_connector.plugins.platform_transport"
SQL_STORE = "newsletter_connector.plugins.sql_store"


def plugins_command(blocked: str) -> Any:
    env = {"NEWSLETTER_BLOCKED_PLUGINS": blocked, "NEWSLETTER_CONFIG": ""}
    return CliRunner().invoke(cli, ["plugins"], env=env)


@pytest.fixture
def broken_entry_point(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """An installed plugin ``broken`` whose import fails; yields the names imported."""
    imported: list[str] = []

    class Dist:
        name, version = "nc-broken", "1.0"

    class BrokenEntryPoint:
        name, dist = "broken", Dist()

        def load(self) -> Any:
            imported.append(self.name)
            raise ImportError("the broken plugin fails to import")

    monkeypatch.setattr(plugin_manager, "entry_points", lambda *, group: [BrokenEntryPoint()])
    plugin_manager.installed_entry_points.cache_clear()
    try:
        yield imported
    finally:
        plugin_manager.installed_entry_points.cache_clear()


def test_the_plugins_command_shows_a_blocked_builtin_and_not_what_it_offered() -> None:
    result = plugins_command(PLATFORM)
    assert result.exit_code == 0, result.output
    assert f"  {PLATFORM} (blocked)\n" in result.stdout
    transports = result.stdout.split("outbound transports:\n", 1)[1]
    assert "  events:" in transports
    assert "platform:" not in transports


def test_an_unknown_name_stops_the_command_naming_the_known_plugins() -> None:
    result = plugins_command(f"{PLATFORM},platfrom_transport")
    assert result.exit_code == 1
    assert (
        "setting blocked_plugins (env NEWSLETTER_BLOCKED_PLUGINS): no plugin is called "
        "'platfrom_transport' (known: newsletter_connector.plugins.events_transport, "
    ) in result.stderr
    assert SQL_STORE in result.stderr


def test_a_blank_name_is_refused_naming_the_setting() -> None:
    result = plugins_command(f"{PLATFORM},,")
    assert result.exit_code == 1
    assert "blocked_plugins (env NEWSLETTER_BLOCKED_PLUGINS) is invalid" in result.stderr
    assert "must not name a blank plugin" in result.stderr


def test_a_blocked_installed_plugin_is_never_imported(broken_entry_point: list[str]) -> None:
    result = plugins_command("broken")
    assert result.exit_code == 0, result.output
    assert "  broken (blocked)\n" in result.stdout
    assert broken_entry_point == []
    with pytest.raises(ImportError, match="fails to import"):
        plugin_manager.build_plugin_manager()  # unblocked, it is imported


def test_blocking_the_storage_backend_in_use_is_a_clear_start_up_error(
    newsletter_settings: Settings,
) -> None:
    settings = Settings.load(
        {},
        database_url=newsletter_settings.database_url,
        base_url=newsletter_settings.base_url,
        blocked_plugins=[SQL_STORE],
    )
    with pytest.raises(PluginNotFound) as raised:
        create_app(settings)
    assert str(raised.value) == (
        "setting storage_backend (NEWSLETTER_STORAGE_BACKEND): unknown storage backend 'sql' "
        "(available: none); is the plugin installed? (it may be blocked: blocked_plugins "
        f"(argument blocked_plugins) names {SQL_STORE})"
    )


def test_an_app_serves_with_the_builtin_platform_transport_blocked(
    newsletter_settings: Settings, newsletter_storage: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"blocked_plugins": (PLATFORM,)})
    app = create_app(settings)
    try:
        pm = app.service.context.plugins
        assert pm.is_blocked(PLATFORM)
        assert [t.name for t in plugin_manager.outbound_transports(pm)] == ["events"]
        client = falcon.testing.TestClient(app)
        assert client.simulate_get("/healthz").status_code == 200
    finally:
        app.service.storage.close()


def test_the_documented_setting_blocks_the_platform_transport(tmp_path: Any) -> None:
    config = tmp_path / "newsletter.toml"
    config.write_text(docblock("plugins-blocked"))
    pm = plugin_manager.build_plugin_manager(settings=Settings.load({}, config_file=config))
    assert pm.is_blocked(PLATFORM)
    assert "platform" not in {t.name for t in plugin_manager.outbound_transports(pm)}


def test_blocking_the_connections_transport_stops_the_runner_saying_so(
    newsletter_service: NewsletterService, newsletter_settings: Settings
) -> None:
    newsletter_service.admin.set_connection(
        platform_base="https://platform.example.test", transport="platform", token="t" * 24
    )
    settings = newsletter_settings.model_copy(update={"blocked_plugins": (PLATFORM,)})
    blocked = NewsletterService.build(settings, storage=newsletter_service.storage)
    with pytest.raises(PluginNotFound) as raised:
        blocked.check_plugins(connection=True)
    assert str(raised.value).startswith(
        "the platform connection: unknown outbound transport 'platform' (available: events)"
    )
    assert str(raised.value).endswith(
        f"(it may be blocked: blocked_plugins (NEWSLETTER_BLOCKED_PLUGINS) names {PLATFORM})"
    )
