"""A database that cannot be used says why: commands (real subprocesses) and the app starting
up print the driver's reason with the URL's password masked, and exit non-zero; "retry
shortly" is left to a running service's transient failures.

Cases: a port nothing listens on, a database name that does not exist, a wrong password (a
PgBouncer with ``md5`` authentication in front of the test server, which itself trusts every
password), a SQLite file in a folder that does not exist.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from newsletter_connector import create_app
from newsletter_connector.errors import DbUnreachable
from newsletter_connector.settings import Settings
from tests.support.pgbouncer import PrivatePgBouncer
from tests.support.waiting import free_port

pytestmark = pytest.mark.system

SECRET = "pw-Zq81-never-shown"
BASE = {"NEWSLETTER_BASE_URL": "https://news.example.org", "NEWSLETTER_SITE_SECRET": "s" * 48}
TRANSIENT = "retry shortly"


def command(
    database_url: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    environ.update(BASE, **(env or {}), NEWSLETTER_DATABASE_URL=database_url)
    return subprocess.run(
        [sys.executable, "-m", "newsletter_connector", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def assert_says_why(result: subprocess.CompletedProcess[str], *reason: str) -> None:
    """Exit 1, one ``error:`` line naming each of ``reason``; no password, no traceback."""
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert result.stderr.startswith("error: cannot use the database: "), result.stderr
    for words in reason:
        assert words in result.stderr, (words, result.stderr)
    assert SECRET not in output
    assert "***" in result.stderr or "sqlite" in result.stderr  # the URL, masked
    assert TRANSIENT not in output
    assert "Traceback" not in output


@pytest.fixture
def postgres_url(newsletter_database_url: str) -> str:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("a PostgreSQL server's refusals")
    return newsletter_database_url


def with_secret(url: str, **changes: Any) -> str:
    return make_url(url).set(password=SECRET, **changes).render_as_string(hide_password=False)


COMMANDS = [
    ("db", "upgrade"),
    ("db", "current"),
    ("keys", "create", "--label", "x"),
    ("sync", "--once"),
    ("serve", "--workers", "1", "--bind", "127.0.0.1:0"),
    ("quickstart", "--bind", "127.0.0.1:0"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_a_port_nothing_listens_on(postgres_url: str, args: tuple[str, ...]) -> None:
    port = free_port()
    result = command(with_secret(postgres_url, port=port), *args)
    assert_says_why(result, "Connection refused", f"port {port}")


def test_a_password_given_as_a_query_parameter_is_never_shown() -> None:
    """libpq also takes ``password`` (and ``sslpassword``) in the URL's query."""
    port = free_port()
    url = f"postgresql://u@127.0.0.1:{port}/x?password={SECRET}&sslpassword={SECRET}x"
    result = command(url, "outbox", "status")
    assert_says_why(result, "Connection refused", "password=***&sslpassword=***")


@pytest.mark.parametrize("args", COMMANDS[:4], ids=[" ".join(a[:2]) for a in COMMANDS[:4]])
def test_a_database_name_that_does_not_exist(postgres_url: str, args: tuple[str, ...]) -> None:
    result = command(with_secret(postgres_url, database="nc_no_such_database"), *args)
    assert_says_why(result, 'database "nc_no_such_database" does not exist')


@pytest.fixture
def bouncer(postgres_url: str) -> Iterator[PrivatePgBouncer]:
    server = PrivatePgBouncer(postgres_url, pool_mode="session", password="right-password-1")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_wrong_password(bouncer: PrivatePgBouncer) -> None:
    wrong = bouncer.url(password=SECRET)
    pooled = {"NEWSLETTER_DB_PGBOUNCER": "true"}
    for args in (("db", "upgrade"), ("keys", "list"), ("sync", "--once")):
        result = command(wrong, *args, env=pooled)
        assert_says_why(result, "password authentication failed", "app:***@")


def test_pgbouncer_refusing_the_startup_options_names_the_setting(
    bouncer: PrivatePgBouncer,
) -> None:
    result = command(bouncer.url(), "keys", "list")
    assert_says_why(result, "unsupported startup parameter: options", "db_pgbouncer")


def test_a_sqlite_file_in_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/missing/news.db"
    for args in (("db", "upgrade"), ("keys", "create", "--label", "x")):
        assert_says_why(command(url, *args), f"the folder {tmp_path}/missing does not exist")
    assert not (tmp_path / "missing").exists()


def test_create_app_raises_a_lasting_failure_with_its_reason(postgres_url: str) -> None:
    settings = Settings.load(
        {
            **BASE,
            "NEWSLETTER_DATABASE_URL": with_secret(postgres_url, database="nc_no_such_database"),
        }
    )
    with pytest.raises(DbUnreachable) as raised:
        create_app(settings)
    message = str(raised.value)
    assert 'database "nc_no_such_database" does not exist' in message
    assert SECRET not in message and "***" in message


def test_create_app_in_a_worker_rides_out_a_refused_connection_saying_why(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker (re)started while the server restarts must not stop gunicorn: the app is
    built, the reason is logged, and requests answer 503 until the database is back."""
    port = free_port()
    settings = Settings.load(
        {**BASE, "NEWSLETTER_DATABASE_URL": with_secret(postgres_url, port=port)}
    )
    with caplog.at_level(logging.WARNING):
        app = create_app(settings)
    logged = caplog.text
    assert "Connection refused" in logged and f"port {port}" in logged
    assert SECRET not in logged
    app.service.close()
