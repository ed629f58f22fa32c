"""The admin CLI (the spec's "admin area"), through click's runner against the test database."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.service.events import queue_event
from newsletter_connector.timeutil import utcnow


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
    non_ascii = run(
        "connection",
        "set",
        "--platform-base",
        "https://p.example",
        "--transport",
        "events",
        input="t\u00f6ken-1234567890abcdef\n",
    )
    assert (
        non_ascii.exit_code == 1
        and "token must be at least 16 characters of printable ASCII" in non_ascii.stderr
    )
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
    env = {"NEWSLETTER_DATABASE_URL": "mssql://nope", "NEWSLETTER_CONFIG": ""}
    result = CliRunner().invoke(cli, ["keys", "list"], env=env)
    assert result.exit_code == 1
    assert "NEWSLETTER_DATABASE_URL" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_plugins_lists_builtins() -> None:
    result = CliRunner().invoke(cli, ["plugins"])
    assert result.exit_code == 0
    assert "newsletter_connector.plugins.sql_store (built-in)" in result.stdout
    assert "sql: the built-in SQL store's own subscribers table" in result.stdout


def test_db_upgrade_says_created_migrated_or_already_current(tmp_path: Any) -> None:
    from newsletter_connector.plugins.sql_store.engine import make_engine
    from newsletter_connector.plugins.sql_store.migrate import head_revision, upgrade

    head = head_revision()
    env = {"NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'new.db'}", "NEWSLETTER_CONFIG": ""}
    created = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert created.stdout == f"database created (schema revision {head})\n", created.stderr
    again = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert again.stdout == f"database already current (schema revision {head})\n"

    old_url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(old_url)
    upgrade(engine, "0005")
    engine.dispose()
    env["NEWSLETTER_DATABASE_URL"] = old_url
    migrated = CliRunner().invoke(cli, ["db", "upgrade"], env=env)
    assert migrated.stdout == f"database migrated from schema revision 0005 to {head}\n"
    assert migrated.stderr == ""


def test_db_upgrade_on_a_current_database_says_so(run: Any) -> None:
    assert run("db", "upgrade").stdout.startswith("database already current (schema revision ")


@pytest.mark.parametrize("command", [["keys", "list"], ["db", "current"], ["listsource", "show"]])
def test_read_commands_on_a_missing_sqlite_file_leave_no_file(
    tmp_path: Any, command: list[str]
) -> None:
    path = tmp_path / "missing.db"
    env = {"NEWSLETTER_DATABASE_URL": f"sqlite:///{path}", "NEWSLETTER_CONFIG": ""}
    result = CliRunner().invoke(cli, command, env=env)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: the database {path} does not exist; "
        "create it with `newsletter-connector db upgrade`\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_listsource_show_says_on_or_off_with_the_user_and_never_the_key(run: Any) -> None:
    off = run("listsource", "show")
    assert off.exit_code == 0
    assert off.stdout.startswith("list-source surface disabled")
    run("listsource", "set-credentials", "--user", "platform-user", input="a-long-list-key\n")
    on = run("listsource", "show")
    assert on.stdout.startswith("list-source surface enabled;")
    assert "user 'platform-user'" in on.stdout and "a-long-list-key" not in on.stdout
    run("listsource", "disable")
    assert run("listsource", "show").stdout.startswith("list-source surface disabled")


def test_quickstart_on_a_busy_port_issues_no_key(tmp_path: Any) -> None:
    import socket

    path = tmp_path / "quick.db"
    env = {"NEWSLETTER_DATABASE_URL": f"sqlite:///{path}", "NEWSLETTER_CONFIG": ""}
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        bind = f"127.0.0.1:{busy.getsockname()[1]}"
        result = CliRunner().invoke(cli, ["quickstart", "--bind", bind], env=env)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"cannot listen on {bind}" in result.stderr
    assert "quickstart --bind 127.0.0.1:8001" in result.stderr
    assert not path.exists()


@pytest.mark.system  # real command-line processes
def test_sync_and_db_commands_print_no_alembic_info(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env["NEWSLETTER_DATABASE_URL"] = f"sqlite:///{tmp_path / 'quiet.db'}"
    env["NEWSLETTER_BASE_URL"] = "https://news.example.test"
    for command in (["db", "upgrade"], ["db", "current"], ["sync", "--once"]):
        result = subprocess.run(
            [sys.executable, "-m", "newsletter_connector", *command],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "alembic" not in result.stderr and "Context impl" not in result.stderr


def test_a_sqlite_file_uri_is_not_mistaken_for_a_missing_file(tmp_path: Any) -> None:
    env = {"NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'plain.db'}", "NEWSLETTER_CONFIG": ""}
    assert CliRunner().invoke(cli, ["db", "upgrade"], env=env).exit_code == 0
    env["NEWSLETTER_DATABASE_URL"] = f"sqlite:///file:{tmp_path / 'plain.db'}?mode=rw&uri=true"
    result = CliRunner().invoke(cli, ["keys", "list"], env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "no API keys\n"


def test_outbox_retry_now_moves_only_waiting_batches_keeping_attempts(
    run: Any, newsletter_service: Any
) -> None:
    with newsletter_service.storage.transaction() as uow:
        for n in range(2):
            queue_event(uow, newsletter_service.context, "contact.message", {"n": n})
    now = utcnow() - timedelta(minutes=5)
    with newsletter_service.storage.transaction() as uow:
        waiting, failed = uow.outbox.claim_batches(
            now=now, lease_until=now + timedelta(minutes=1), batch_size=1, max_batches=2
        )
        uow.outbox.schedule_retry(
            waiting.id, error="HTTP 503", next_attempt_at=now + timedelta(hours=6)
        )
        uow.outbox.mark_failed(failed.id, error="HTTP 400", at=now)
    assert run("outbox", "retry-now").stdout == (
        "1 waiting batch(es) are due now; they go out on the next sync\n"
    )
    with newsletter_service.storage.transaction(write=False) as uow:
        moved, kept = uow.outbox.get_batch(waiting.id), uow.outbox.get_batch(failed.id)
    assert moved.state == "pending" and moved.attempts == 1
    assert now < moved.next_attempt_at <= utcnow()
    assert (kept.state, kept.attempts, kept.last_error) == ("failed", 1, "HTTP 400")
    assert run("outbox", "retry-now").stdout.startswith("0 waiting batch(es)")


def test_outbox_status_names_the_platform_connection_or_says_there_is_none(
    run: Any, newsletter_service: Any
) -> None:
    first = run("outbox", "status").stdout.splitlines()[0]
    assert first == (
        "platform connection: none configured: events stay queued until one is set "
        "(newsletter-connector connection set)"
    )
    with newsletter_service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://user:pass@platform.example.test/base",
            transport="events",
            token="platform-token-0123456789",
            at=newsletter_service.context.clock(),
        )
    shown = run("outbox", "status").stdout
    assert shown.splitlines()[0].startswith("platform connection: https://platform.example.test")
    assert shown.splitlines()[0].endswith(" via events")
    assert "pass" not in shown and "platform-token" not in shown
