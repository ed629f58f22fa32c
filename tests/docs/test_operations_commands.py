"""The operations guide's PostgreSQL commands, run as a newcomer runs them: in a fresh bash
(``-euo pipefail``) in an empty folder, with no setting of the suite's in its environment,
against a role and a database that do not exist yet; then its upgrade line. What ``db upgrade``
prints is checked against the guide's words, with the newest migration's number."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from newsletter_connector.plugins.sql_store.migrate import head_revision
from tests.support.docblocks import docblock
from tests.support.servers import started, wait_until_listening
from tests.support.waiting import free_port

# Creates a role and a database on the run's PostgreSQL server, and serves from a subprocess
pytestmark = pytest.mark.system


def _server() -> str:
    """The run's PostgreSQL server (the SQLite pass has none: these commands are PostgreSQL's)."""
    url = os.environ.get("NEWSLETTER_TEST_DATABASE_URL")
    if not url:
        pytest.skip("PostgreSQL only: the guide's commands create a PostgreSQL role and database")
    return url


def _replaced(text: str, swaps: dict[str, str]) -> str:
    """``text`` with each of ``swaps`` made, each exactly once (so an edit of the guide that
    moves one fails here, not silently)."""
    for old, new in swaps.items():
        assert text.count(old) == 1, f"the guide's block no longer holds {old!r} once:\n{text}"
        text = text.replace(old, new)
    return text


def _shell(folder: Path, server: str) -> dict[str, str]:
    """A fresh shell's environment: this Python's commands and the system's on PATH, the
    PostgreSQL client tools pointed at the server as its superuser (the guide's ``sudo -u
    postgres``), and nothing else."""
    url = make_url(server)
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(folder),
        "PGHOST": url.host or "127.0.0.1",
        "PGPORT": str(url.port or 5432),
        "PGUSER": url.username or "postgres",
    }


def test_the_postgresql_setup_and_the_upgrade_line_run_as_written(tmp_path: Path) -> None:
    server = _server()
    env = _shell(tmp_path, server)
    name = f"nc_newcomer_{uuid.uuid4().hex[:8]}"
    port = free_port()
    host = env["PGHOST"]
    setup = _replaced(
        docblock("ops-postgresql"),
        {
            # The package is installed already, as the README installs it (the wheel's own
            # install in a fresh environment is tests/packaging/test_wheel_install.py's).
            "pip install -e '.[postgres]'": "python -c 'import newsletter_connector, psycopg'",
            "createuser app ": f"createuser {name} ",
            "createdb -O app newsletter ": f"createdb -O {name} {name} ",
            "postgresql://app@db.internal/newsletter": f"postgresql://{name}@{host}:{env['PGPORT']}/{name}",
            # The last command runs in the shell's place, so stopping it stops the server.
            "newsletter-connector serve --bind 127.0.0.1:8000": (
                f"exec newsletter-connector serve --bind 127.0.0.1:{port}"
            ),
        },
    )
    try:
        log = tmp_path / "setup.log"
        with (
            log.open("w") as output,
            started(
                ["bash", "-euo", "pipefail", "-c", setup], env=env, cwd=tmp_path, output=output
            ) as process,
        ):
            wait_until_listening(f"http://127.0.0.1:{port}/healthz", process)
            assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
            signup = httpx.get(f"http://127.0.0.1:{port}/signup")
            assert signup.status_code == 200
        printed = log.read_text()
        assert f"database created (schema revision {head_revision()})\n" in printed, printed

        # The upgrade line, up to the restart (the units are the host's, not this machine's).
        upgrade = _replaced(
            docblock("ops-upgrade"),
            {" && systemctl restart newsletter-web newsletter-sync": ""},
        )
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", upgrade],
            env={
                **env,
                "NEWSLETTER_DATABASE_URL": f"postgresql://{name}@{host}:{env['PGPORT']}/{name}",
                "NEWSLETTER_BASE_URL": "https://news.example.org",
            },
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout == (
            f"database already current (schema revision {head_revision()})\n"
            "database schema is current\n"
        )

        # The backup line, then its restore into an empty database (made first, as it says).
        url = f"postgresql://{name}@{host}:{env['PGPORT']}/{name}"
        backup = _replaced(
            docblock("ops-pg-dump"),
            {
                "postgresql://app@db.internal/newsletter_restored": f"{url}_restored",
                "newsletter-2026-11-21.dump": "newsletter-$(date +%F).dump",
            },
        )
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", f"createdb -O {name} {name}_restored\n{backup}"],
            env={**env, "NEWSLETTER_DATABASE_URL": url},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        restored = subprocess.run(
            ["newsletter-connector", "db", "current"],
            env={
                **env,
                "NEWSLETTER_DATABASE_URL": f"{url}_restored",
                "NEWSLETTER_BASE_URL": "https://news.example.org",
            },
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert restored.stdout == "database schema is current\n", restored.stderr
    finally:
        for command in (
            ["dropdb", "--if-exists", f"{name}_restored"],
            ["dropdb", "--if-exists", name],
            ["dropuser", "--if-exists", name],
        ):
            subprocess.run(command, env=env, capture_output=True, timeout=60, check=False)


def test_a_wrong_database_name_is_said_as_the_guide_shows(tmp_path: Path) -> None:
    """The guide's error for a misspelt database name, word for word but for the user name
    (the guide's role is ``app``; here the server's superuser, whose password is masked)."""
    server = _server()
    env = _shell(tmp_path, server)
    user, host, port = env["PGUSER"], env["PGHOST"], env["PGPORT"]
    (shown,) = docblock("ops-wrong-database").splitlines()
    result = subprocess.run(
        ["newsletter-connector", "db", "upgrade"],
        env={**env, "NEWSLETTER_DATABASE_URL": f"postgresql://{user}:secret@{host}:{port}/nwes"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    expected = shown.replace("postgresql+psycopg://app:", f"postgresql+psycopg://{user}:")
    expected = expected.replace('"127.0.0.1", port 5432', f'"{host}", port {port}')
    expected = expected.replace("@127.0.0.1:5432/", f"@{host}:{port}/")
    assert result.stderr.strip() == expected
