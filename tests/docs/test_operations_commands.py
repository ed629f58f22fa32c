"""The operations guide's PostgreSQL and MariaDB commands, run as a newcomer runs them: in a
fresh bash (``-euo pipefail``) in an empty folder, with no setting of the suite's in its
environment, against a database (and on PostgreSQL a role) that does not exist yet; then its
upgrade line. What ``db upgrade`` prints is checked against the guide's words, with the newest
migration's number. Each runs on its own kind of server, the one the run is given."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from newsletter_connector.plugins.sql_store.migrate import head_revision
from tests.support.doc_shell import Shell, replaced
from tests.support.docblocks import docblock
from tests.support.waiting import free_port

# Creates a role and a database on the run's database server, and serves from a subprocess
pytestmark = pytest.mark.system


def _server(kind: str = "postgresql") -> str:
    """The run's server of ``kind`` (``postgresql``; ``mysql`` for MySQL or MariaDB): the
    guide's commands for it are that server's own client's."""
    url = os.environ.get("NEWSLETTER_TEST_DATABASE_URL", "")
    backend = make_url(url).get_backend_name() if url else ""
    if backend.replace("mariadb", "mysql") != kind:
        pytest.skip(f"{kind} only: the guide's commands here are that server's own client's")
    return url


def _shell(folder: Path, server: str) -> Shell:
    """A fresh shell in ``folder``, with the PostgreSQL client tools pointed at the server as
    its superuser (the guide's ``sudo -u postgres``)."""
    url = make_url(server)
    return Shell(
        folder,
        PGHOST=url.host or "127.0.0.1",
        PGPORT=str(url.port or 5432),
        PGUSER=url.username or "postgres",
    )


def test_the_postgresql_setup_and_the_upgrade_line_run_as_written(tmp_path: Path) -> None:
    shell = _shell(tmp_path, _server())
    env = shell.env
    name = f"nc_newcomer_{uuid.uuid4().hex[:8]}"
    port = free_port()
    host = env["PGHOST"]
    setup = replaced(
        docblock("ops-postgresql"),
        {
            # The package is installed already, as the README installs it (the wheel's own
            # install in a fresh environment is tests/packaging/test_wheel_install.py's).
            "pip install -e '.[postgres]'": "python -c 'import newsletter_connector, psycopg'",
            "createuser app ": f"createuser {name} ",
            "createdb -O app newsletter ": f"createdb -O {name} {name} ",
            "postgresql://app@db.internal/newsletter": f"postgresql://{name}@{host}:{env['PGPORT']}/{name}",
            "newsletter-connector serve --bind 127.0.0.1:8000": (
                f"newsletter-connector serve --bind 127.0.0.1:{port}"
            ),
        },
    )
    try:
        with shell.running(setup, probe_url=f"http://127.0.0.1:{port}/healthz") as log:
            assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
            signup = httpx.get(f"http://127.0.0.1:{port}/signup")
            assert signup.status_code == 200
        printed = log.read_text()
        assert f"database created (schema revision {head_revision()})\n" in printed, printed

        # The upgrade line, up to the restart (the units are the host's, not this machine's).
        upgrade = replaced(
            docblock("ops-upgrade"),
            {" && systemctl restart newsletter-web newsletter-sync": ""},
        )
        url = f"postgresql://{name}@{host}:{env['PGPORT']}/{name}"
        base_url = "https://news.example.org"
        result = shell.run(upgrade, NEWSLETTER_DATABASE_URL=url, NEWSLETTER_BASE_URL=base_url)
        assert result.stdout == (
            f"database already current (schema revision {head_revision()})\n"
            "database schema is current\n"
        )

        # The backup line, then its restore into an empty database (made first, as it says).
        backup = replaced(
            docblock("ops-pg-dump"),
            {
                "postgresql://app@db.internal/newsletter_restored": f"{url}_restored",
                "newsletter-2026-11-21.dump": "newsletter-$(date +%F).dump",
            },
        )
        shell.run(f"createdb -O {name} {name}_restored\n{backup}", NEWSLETTER_DATABASE_URL=url)
        restored = shell.run(
            "newsletter-connector db current",
            check=False,
            NEWSLETTER_DATABASE_URL=f"{url}_restored",
            NEWSLETTER_BASE_URL=base_url,
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
    shell = _shell(tmp_path, _server())
    user, host, port = shell.env["PGUSER"], shell.env["PGHOST"], shell.env["PGPORT"]
    (shown,) = docblock("ops-wrong-database").splitlines()
    result = shell.run(
        "newsletter-connector db upgrade",
        check=False,
        NEWSLETTER_DATABASE_URL=f"postgresql://{user}:secret@{host}:{port}/nwes",
    )
    assert result.returncode == 1
    expected = shown.replace("postgresql+psycopg://app:", f"postgresql+psycopg://{user}:")
    expected = expected.replace('"127.0.0.1", port 5432', f'"{host}", port {port}')
    expected = expected.replace("@127.0.0.1:5432/", f"@{host}:{port}/")
    assert result.stderr.strip() == expected


def test_the_mariadb_setup_runs_as_written(tmp_path: Path) -> None:
    server = make_url(_server("mysql"))
    host, port = server.host or "127.0.0.1", str(server.port or 3306)
    user = server.username or "root"
    shell = Shell(tmp_path, MYSQL_HOST=host, MYSQL_TCP_PORT=port, USER=user)
    name = f"nc_newcomer_{uuid.uuid4().hex[:8]}"
    port_served = free_port()
    setup = replaced(
        docblock("ops-mariadb"),
        {
            # Installed already, as the README installs it, with the extra's driver.
            "pip install -e '.[mysql]'": "python -c 'import newsletter_connector, pymysql'",
            "CREATE DATABASE newsletter ": f"CREATE DATABASE {name} ",
            "mysql://app:secret@db.internal/newsletter": f"mysql://{user}@{host}:{port}/{name}",
            "newsletter-connector serve --bind 127.0.0.1:8000": (
                f"newsletter-connector serve --bind 127.0.0.1:{port_served}"
            ),
        },
    )
    try:
        with shell.running(setup, probe_url=f"http://127.0.0.1:{port_served}/healthz") as log:
            assert httpx.get(f"http://127.0.0.1:{port_served}/healthz").status_code == 200
            assert httpx.get(f"http://127.0.0.1:{port_served}/signup").status_code == 200
        printed = log.read_text()
        assert f"database created (schema revision {head_revision()})\n" in printed, printed
    finally:
        shell.run(f"mysql -e 'DROP DATABASE IF EXISTS {name}'", check=False)
