"""Settings fail at start-up and say where the bad value came from: unknown plugin names stop
``serve``, ``sync`` and ``create_app`` before any work; a misspelt ``NEWSLETTER_*`` variable
is refused like an unknown TOML key; errors name ``env NEWSLETTER_X``, ``file PATH key x`` or
the command-line flag."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector import create_app
from newsletter_connector.cli import cli
from newsletter_connector.cli import serve as serve_module
from newsletter_connector.errors import PluginNotFound
from newsletter_connector.settings import OTHER_VARIABLES, Settings, SettingsError
from tests.support.waiting import free_port

BASE = {"NEWSLETTER_BASE_URL": "https://news.example.test"}


@pytest.fixture
def env(newsletter_settings: Any, newsletter_storage: Any) -> dict[str, str]:
    """Command settings on the migrated test database."""
    return {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": "settings-sources-test-secret",
        "NEWSLETTER_CONFIG": "",
    }


@pytest.fixture
def gunicorn_runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``serve`` records that it would start gunicorn instead of starting it."""
    calls: list[Any] = []
    monkeypatch.setattr(
        serve_module, "serve_under_gunicorn", lambda settings, **options: calls.append(settings)
    )
    return calls


def invoke(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(cli, list(args), env=env)


# -- unknown plugin names fail at start-up ---------------------------------------------------


def test_create_app_refuses_an_unknown_renderer_or_backend(newsletter_settings: Any) -> None:
    fancy = newsletter_settings.model_copy(update={"issue_renderer": "fancy"})
    with pytest.raises(PluginNotFound) as refused:
        create_app(fancy)
    assert str(refused.value) == (
        "setting issue_renderer (NEWSLETTER_ISSUE_RENDERER): unknown issue renderer 'fancy' "
        "(available: html); is the plugin installed?"
    )
    redis = newsletter_settings.model_copy(update={"storage_backend": "redis"})
    with pytest.raises(PluginNotFound, match=r"setting storage_backend .*'redis'.*available: sql"):
        create_app(redis)


@pytest.mark.parametrize(
    ("variable", "message"),
    [
        (
            "NEWSLETTER_ISSUE_RENDERER",
            "error: setting issue_renderer (env NEWSLETTER_ISSUE_RENDERER)",
        ),
        (
            "NEWSLETTER_STORAGE_BACKEND",
            "error: setting storage_backend (env NEWSLETTER_STORAGE_BACKEND)",
        ),
    ],
)
def test_serve_and_sync_refuse_an_unknown_plugin_before_starting(
    env: dict[str, str], gunicorn_runs: list[Any], variable: str, message: str
) -> None:
    env = {**env, variable: "missing-plugin"}
    for command in (["serve"], ["sync", "--once"]):
        result = invoke(env, *command)
        assert result.exit_code == 1, (command, result.output)
        assert result.stderr.startswith(message)
        assert "unknown" in result.stderr and "'missing-plugin'" in result.stderr
        assert "is the plugin installed?" in result.stderr
        assert len(result.stderr.splitlines()) == 1
    assert gunicorn_runs == []


def test_serve_starts_gunicorn_when_the_plugins_are_installed(
    env: dict[str, str], gunicorn_runs: list[Any]
) -> None:
    result = invoke(env, "serve")
    assert result.exit_code == 0, result.output
    assert [s.issue_renderer for s in gunicorn_runs] == ["html"]


def test_sync_refuses_a_connection_whose_transport_is_not_installed(
    env: dict[str, str], newsletter_service: Any
) -> None:
    with newsletter_service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://platform.example.test",
            transport="carrier-pigeon",
            token="connection-token-0123456789",
            at=datetime(2026, 11, 20),
        )
    result = invoke(env, "sync", "--once")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: the platform connection: unknown outbound transport 'carrier-pigeon'"
    )
    assert "connection set --transport" in result.stderr
    assert "connection-token-0123456789" not in result.output


# -- misspelt environment variables ----------------------------------------------------------


def test_a_misspelt_variable_is_refused_with_the_closest_name() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.load({**BASE, "NEWSLETTER_DATABSE_URL": "sqlite:///x.db"})
    assert str(refused.value) == (
        "unknown setting 'NEWSLETTER_DATABSE_URL' (in the environment); "
        "did you mean 'NEWSLETTER_DATABASE_URL'?"
    )


def test_a_variable_like_no_setting_gets_no_hint() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.load({"NEWSLETTER_COLOUR": "blue"})
    assert str(refused.value) == "unknown setting 'NEWSLETTER_COLOUR' (in the environment)"


def test_variables_with_a_use_of_their_own_and_empty_ones_are_accepted() -> None:
    assert {"NEWSLETTER_CONFIG", "NEWSLETTER_TEST_DATABASE_URL"} <= OTHER_VARIABLES
    env = {
        **BASE,
        "NEWSLETTER_CONFIG": "",
        "NEWSLETTER_TEST_DATABASE_URL": "postgresql://postgres@127.0.0.1/postgres",
        "NEWSLETTER_BIND": "127.0.0.1:8000",  # examples/standalone/gunicorn.conf.py
        "NEWSLETTER_WORKERS": "2",
        "NEWSLETTER_DATABSE_URL": "",  # set but empty: unset, as for a setting
    }
    assert Settings.load(env).base_url == "https://news.example.test"


def test_an_unknown_toml_key_gets_the_same_hint(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('base_url = "https://e.org"\nbase_ulr = "typo"\n')
    with pytest.raises(SettingsError) as refused:
        Settings.load({}, config_file=config)
    assert (
        str(refused.value) == f"unknown setting 'base_ulr' (in {config}); did you mean 'base_url'?"
    )


def test_a_command_with_a_misspelt_variable_exits_1(env: dict[str, str]) -> None:
    result = invoke({**env, "NEWSLETTER_SITE_SECERT": "x"}, "keys", "list")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: unknown setting 'NEWSLETTER_SITE_SECERT' (in the environment); "
        "did you mean 'NEWSLETTER_SITE_SECRET'?\n"
    )


# -- errors name the source of the bad value -------------------------------------------------


def test_a_bad_value_from_the_environment_names_its_variable() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.load({"NEWSLETTER_BASE_URL": "ftp://news.example.test"})
    assert str(refused.value).startswith(
        "setting base_url (env NEWSLETTER_BASE_URL) is invalid: Value error, must be an "
        "absolute http(s) URL"
    )


def test_a_bad_value_from_the_file_names_the_file_and_key(tmp_path: Path) -> None:
    config = tmp_path / "newsletter.toml"
    config.write_text('[newsletter_connector]\ndelivery_mode = "carrier-pigeon"\n')
    with pytest.raises(SettingsError) as refused:
        Settings.load({**BASE, "NEWSLETTER_CONFIG": str(config)})
    assert str(refused.value).startswith(
        f"setting delivery_mode (file {config} key delivery_mode) is invalid: "
    )


def test_a_plugin_name_from_the_file_names_the_file_and_key(
    tmp_path: Path, newsletter_settings: Any, newsletter_storage: Any
) -> None:
    config = tmp_path / "newsletter.toml"
    config.write_text('issue_renderer = "fancy"\n')
    settings = Settings.load(
        {
            **BASE,
            "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
            "NEWSLETTER_SITE_SECRET": "settings-sources-test-secret",
        },
        config_file=config,
    )
    with pytest.raises(PluginNotFound) as refused:
        create_app(settings)
    assert str(refused.value).startswith(
        f"setting issue_renderer (file {config} key issue_renderer): unknown issue renderer 'fancy'"
    )


def test_a_bad_value_from_a_flag_names_the_flag(
    env: dict[str, str], gunicorn_runs: list[Any]
) -> None:
    result = invoke(env, "serve", "--base-url", "ftp://news.example.test")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: setting base_url (--base-url) is invalid: Value error, must be an absolute"
    )
    assert gunicorn_runs == []


def test_a_value_from_an_environment_beaten_by_code_forgets_its_source() -> None:
    settings = Settings.load({**BASE, "NEWSLETTER_ISSUE_RENDERER": "plain"})
    assert settings.source_of("issue_renderer") == "env NEWSLETTER_ISSUE_RENDERER"
    assert settings.source_of("site_name") == "NEWSLETTER_SITE_NAME"  # a default
    changed = settings.model_copy(update={"issue_renderer": "html"})
    assert changed.source_of("issue_renderer") == "NEWSLETTER_ISSUE_RENDERER"
    assert changed.source_of("base_url") == "env NEWSLETTER_BASE_URL"
    # The same values are the same settings, wherever they came from.
    assert Settings.load(BASE) == Settings(base_url="https://news.example.test")


def test_quickstart_refuses_an_unknown_renderer_before_creating_anything(
    tmp_path: Path, gunicorn_runs: list[Any]
) -> None:
    database = tmp_path / "trial.db"
    env = {
        "NEWSLETTER_DATABASE_URL": f"sqlite:///{database}",
        "NEWSLETTER_ISSUE_RENDERER": "fancy",
        "NEWSLETTER_CONFIG": "",
    }
    result = invoke(env, "quickstart", "--bind", f"127.0.0.1:{free_port()}")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: setting issue_renderer (env NEWSLETTER_ISSUE_RENDERER)")
    assert "API key" not in result.stdout
    assert not database.exists()
    assert gunicorn_runs == []


# -- newsletter.toml in the working directory ------------------------------------------------


def test_newsletter_toml_in_the_working_directory_is_read_unless_another_file_is_named(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gunicorn_runs: list[Any],
    newsletter_settings: Any,
    newsletter_storage: Any,
) -> None:
    monkeypatch.chdir(tmp_path)
    database = f'database_url = "{newsletter_settings.database_url}"\n'
    (tmp_path / "newsletter.toml").write_text(database + 'base_url = "https://default.example"\n')
    (tmp_path / "other.toml").write_text(database + 'base_url = "https://other.example"\n')
    nothing_exported: dict[str, str | None] = {
        "NEWSLETTER_CONFIG": None,
        "NEWSLETTER_DATABASE_URL": None,
        "NEWSLETTER_BASE_URL": None,
        "NEWSLETTER_SITE_SECRET": "settings-sources-test-secret",
    }

    def served_with(*args: str, **env: str) -> Settings:
        result = CliRunner().invoke(cli, [*args, "serve"], env={**nothing_exported, **env})
        assert result.exit_code == 0, result.output
        settings: Settings = gunicorn_runs.pop()
        return settings

    default = served_with()
    assert default.base_url == "https://default.example"
    assert served_with("--config", "other.toml").base_url == "https://other.example"
    assert served_with(NEWSLETTER_CONFIG="other.toml").base_url == "https://other.example"
    exported = served_with(NEWSLETTER_BASE_URL="https://env.example")
    assert exported.base_url == "https://env.example"  # the environment still wins

    # NEWSLETTER_CONFIG set but empty: no settings file at all.
    result = CliRunner().invoke(cli, ["serve"], env={**nothing_exported, "NEWSLETTER_CONFIG": ""})
    assert result.exit_code == 1
    assert "setting base_url (NEWSLETTER_BASE_URL) is required but not set" in result.output
    assert gunicorn_runs == []
