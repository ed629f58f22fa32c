"""An install without the ``postgres`` extra works on SQLite, and only ``serve`` needs gunicorn.

A subprocess runs with an import hook that refuses ``psycopg`` (which only the extra installs)
and ``gunicorn`` (which a host serving the app under uWSGI, mod_wsgi or an ASGI server may not
have): it migrates a fresh database through the command line, builds the app with
``create_app``, signs up a subscriber through the API with a key (the per-request key check),
and delivers the queued event with ``sync --once`` to a real HTTPS receiver. Every refused
import is recorded, so an import hidden behind ``except ImportError`` fails the test too.

On PostgreSQL the same run refuses only gunicorn, and must have loaded psycopg: the driver is
imported because, and only when, the database is PostgreSQL. A PostgreSQL ``database_url``
without the driver is a one-line error naming the extra, not a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from newsletter_connector.testing.databases import (
    postgres_server_url,
    temporary_postgres_database,
)
from tests.support.tls_receiver import TlsReceiver

pytestmark = pytest.mark.system

NOT_INSTALLED = ("psycopg", "psycopg_binary", "psycopg_c", "pymysql", "gunicorn")

REFUSING = """
import json, os, sys

refused = []


class NotInstalled:
    \"\"\"Acts as if the top-level packages named in REFUSE were not installed.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in json.loads(os.environ["REFUSE"]):
            refused.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
"""

SCRIPT = (
    REFUSING
    + """
import falcon.testing

from newsletter_connector import Settings, create_app
from newsletter_connector.cli import cli
from newsletter_connector.service import NewsletterService

cli.main(["db", "upgrade"], standalone_mode=False)
settings = Settings.load()
service = NewsletterService.build(settings)
key = service.admin.create_api_key("without-extras").key
service.admin.set_connection(
    platform_base=os.environ["PLATFORM_BASE"], transport="platform", token="platform-token-0123"
)
service.close()

app = create_app(settings)
signup = falcon.testing.TestClient(app).simulate_post(
    "/api/newsletter/v1/subscribers",
    headers={"Authorization": f"Bearer {key}"},
    json={"email": "reader@example.org"},
)
app.service.close()
print("signup", signup.status_code, flush=True)

cli.main(["sync", "--once"], standalone_mode=False)
loaded = sorted({name.partition(".")[0] for name in sys.modules} & {"psycopg", "gunicorn"})
print("result", json.dumps({"refused": refused, "loaded": loaded}), flush=True)
"""
)

COMMAND_LINE = (
    REFUSING
    + """
from newsletter_connector.cli import main

sys.argv = ["newsletter-connector", *sys.argv[1:]]
main()
"""
)


@contextmanager
def fresh_database(tmp_path: Path) -> Iterator[str]:
    """An empty database of the kind the suite runs on (PostgreSQL when configured)."""
    server_url = postgres_server_url()
    if server_url is None:
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    with temporary_postgres_database(server_url) as url:
        yield url


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


def test_migrate_serve_and_sync_without_optional_packages(
    tmp_path: Path, receiver: TlsReceiver
) -> None:
    with fresh_database(tmp_path) as database_url:
        on_postgres = database_url.startswith("postgresql")
        refuse = ["gunicorn"] if on_postgres else list(NOT_INSTALLED)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
        env.update(
            NEWSLETTER_DATABASE_URL=database_url,
            NEWSLETTER_BASE_URL="https://news.example.test",
            NEWSLETTER_SITE_SECRET="without-extras-secret",
            SSL_CERT_FILE=str(receiver.ca_file),
            PLATFORM_BASE=receiver.base,
            REFUSE=json.dumps(refuse),
        )
        result = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "schema revision" in output
    assert "signup 201" in output
    assert "delivered 1 event(s) in 1 batch(es); 0 batch(es) failed" in output
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("result ")]
    outcome = json.loads(line.removeprefix("result "))
    assert outcome["refused"] == []
    assert outcome["loaded"] == (["psycopg"] if on_postgres else [])
    (pushed,) = receiver.received
    assert "reader@example.org" in json.dumps(pushed.body)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "postgresql://newsletter@127.0.0.1:1/newsletter",
            "a PostgreSQL database, but its driver (psycopg) is not installed: install the "
            "package with its postgres extra, pip install 'newsletter-connector[postgres]'",
        ),
        (
            "mariadb://newsletter@127.0.0.1:1/newsletter",
            "a MySQL or MariaDB database, but its driver (PyMySQL) is not installed: install "
            "the package with its mysql extra, pip install 'newsletter-connector[mysql]'",
        ),
    ],
    ids=["postgresql", "mariadb"],
)
def test_a_database_url_without_the_driver_names_the_extra(
    tmp_path: Path, url: str, said: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        # No server is reached: the driver is looked for first.
        NEWSLETTER_DATABASE_URL=url,
        REFUSE=json.dumps(NOT_INSTALLED),
    )
    result = subprocess.run(
        [sys.executable, "-c", COMMAND_LINE, "db", "upgrade"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: database_url is {said}"
