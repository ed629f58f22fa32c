"""The admin CLI (the spec's "admin area"), through click's runner against the test database."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli


@pytest.fixture
def run(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_SITE_SECRET": "cli-test-secret",
        "NEWSLETTER_CONFIG": "",
    }

    def invoke(*args: str, input: str | None = None) -> Any:
        return CliRunner().invoke(cli, list(args), env=env, input=input, catch_exceptions=False)

    return invoke


def test_keys_create_prints_key_once_and_stores_only_digest(
    run: Any, newsletter_service: Any, newsletter_storage: Any
) -> None:
    result = run("keys", "create", "--label", "crm")
    assert result.exit_code == 0
    key = result.stdout.strip().splitlines()[0]
    assert key.startswith("nlk_") and len(key) > 40
    assert "cannot be shown again" in result.stderr
    assert newsletter_service.admin.authenticate_api_key(key).label == "crm"
    # Nothing in the database holds the key itself.
    from sqlalchemy import text

    with newsletter_storage.engine.connect() as connection:
        stored = connection.execute(text("SELECT * FROM nc_api_keys")).mappings().one()
    assert key not in {str(v) for v in stored.values()}
    listing = run("keys", "list")
    assert "crm" in listing.stdout and key not in listing.stdout and "active" in listing.stdout


def test_keys_duplicate_label_and_revoke(run: Any) -> None:
    run("keys", "create", "--label", "crm")
    again = run("keys", "create", "--label", "crm")
    assert again.exit_code == 1
    assert again.stderr.strip().startswith("error:") and "crm" in again.stderr
    assert run("keys", "revoke", "crm").exit_code == 0
    assert "revoked" in run("keys", "list").stdout
    missing = run("keys", "revoke", "nope")
    assert missing.exit_code == 1 and "nope" in missing.stderr


def test_listsource_credentials_from_stdin(run: Any, newsletter_service: Any) -> None:
    result = run("listsource", "set-credentials", "--user", "platform", input="a-long-list-key\n")
    assert result.exit_code == 0, result.stderr
    assert "a-long-list-key" not in result.stdout
    assert newsletter_service.admin.verify_listsource_credentials("platform", "a-long-list-key")
    assert newsletter_service.admin.verify_listsource_credentials("platform", "wrong") is False
    assert run("listsource", "disable").exit_code == 0
    assert newsletter_service.admin.verify_listsource_credentials("platform", "x") is None
    short = run("listsource", "set-credentials", "--user", "platform", input="short\n")
    assert short.exit_code == 1 and "key" in short.stderr


def test_connection_rejects_http_and_unknown_transport(run: Any) -> None:
    token = "t" * 32 + "\n"
    http = run(
        "connection", "set", "--platform-base", "http://p.example", "--transport", "x", input=token
    )
    assert http.exit_code == 1 and "platform_base" in http.stderr
    unknown = run(
        "connection",
        "set",
        "--platform-base",
        "https://p.example",
        "--transport",
        "nope",
        input=token,
    )
    assert unknown.exit_code == 1
    assert "is the plugin installed?" in unknown.stderr
    assert "t" * 32 not in unknown.stderr
    assert run("connection", "show").stdout.strip() == "no connection configured"


def test_connection_show_never_prints_token(run: Any, newsletter_service: Any) -> None:
    from newsletter_connector.descriptors import OutboundTransport
    from newsletter_connector.hookspecs import hookimpl

    class TestTransportPlugin:
        @hookimpl
        def newsletter_outbound_transports(self) -> list[OutboundTransport]:
            return [OutboundTransport("test", "for tests", lambda connection, client: None)]

    newsletter_service.context.plugins.register(TestTransportPlugin())
    newsletter_service.admin.set_connection(
        platform_base="https://platform.example/", transport="test", token="secret-token-123456"
    )
    shown = run("connection", "show")
    assert "https://platform.example" in shown.stdout
    assert "secret-token-123456" not in shown.stdout
    assert run("connection", "disable").stdout.strip() == "connection disabled"
    assert run("connection", "show").stdout.strip() == "no connection configured"


def test_bad_arguments_exit_nonzero_with_one_line(run: Any) -> None:
    result = CliRunner().invoke(cli, ["keys", "create"])
    assert result.exit_code == 2
    assert "--label" in result.stderr


def test_db_current_on_unmigrated_database_says_how(tmp_path: Any) -> None:
    env = {"NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'new.db'}", "NEWSLETTER_CONFIG": ""}
    result = CliRunner().invoke(cli, ["db", "current"], env=env)
    assert result.exit_code == 1
    assert "newsletter-connector db upgrade" in result.stderr
    upgraded = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert upgraded.exit_code == 0, upgraded.stderr
    assert CliRunner().invoke(cli, ["db", "current"], env=env).exit_code == 0


def test_invalid_setting_fails_naming_it(tmp_path: Any) -> None:
    env = {"NEWSLETTER_DATABASE_URL": "mysql://nope", "NEWSLETTER_CONFIG": ""}
    result = CliRunner().invoke(cli, ["keys", "list"], env=env)
    assert result.exit_code == 1
    assert "NEWSLETTER_DATABASE_URL" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_plugins_lists_builtins() -> None:
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0
    assert "newsletter_connector.plugins.sql_store (built-in)" in result.stdout
    assert "sql: SQLAlchemy Core store" in result.stdout
