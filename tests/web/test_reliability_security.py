"""Reliability, security: under gunicorn with several workers, a revoked key, cleared
list-source credentials and a disabled connection are refused on the very next request, whoever
answers it (each worker's pid is read from its access-log lines: every one of them is seen
answering before and after); and no secret or token issued during a full run appears in any log.

The server is the production app (``examples/standalone/wsgi.py``) under gunicorn with the
access-log redaction ``newsletter-connector serve`` installs, every log at DEBUG (Python logging
of the app and SQLAlchemy included) written to one file this test reads.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest

from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support.paths import ROOT
from tests.support.servers import wait_until_listening
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import free_port

pytestmark = pytest.mark.system

WORKERS = 3
CLI = [sys.executable, "-m", "newsletter_connector"]
API = "/api/newsletter/v1"
LISTSOURCE_USER = "platform"
GUNICORN_CONFIG = """
    bind = "127.0.0.1:{port}"
    workers = {workers}
    loglevel = "debug"
    accesslog = "-"
    access_log_format = "ACCESS %(p)s %(s)s %(m)s %(U)s"
    errorlog = "-"
    logger_class = "newsletter_connector.observability.gunicorn_logging.RedactingLogger"
    logconfig_dict = {{
        "version": 1,
        "disable_existing_loggers": False,
        "root": {{"level": "DEBUG", "handlers": ["console"]}},
        # gunicorn's own loggers name these two handlers
        "formatters": {{"levels": {{"format": "[%(levelname)s] %(name)s: %(message)s"}}}},
        "handlers": {{
            "console": {{
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": "levels",
            }},
            "error_console": {{
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": "levels",
            }},
        }},
    }}
"""


class Server:
    """gunicorn serving the standalone app; all its output lands in ``log``."""

    def __init__(self, env: dict[str, str], folder: Path) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        config = folder / "gunicorn.conf.py"
        config.write_text(textwrap.dedent(GUNICORN_CONFIG.format(port=port, workers=WORKERS)))
        self.log = folder / "server.log"
        self._out = self.log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(config), "examples.standalone.wsgi:app"],
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            stdout=self._out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        wait_until_listening(self.base + API + "/openapi.json", self.process)  # type: ignore[arg-type]

    def stop(self) -> str:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._out.close()
        return self.log.read_text()


@pytest.fixture
def app_env(newsletter_settings: Any) -> dict[str, str]:
    return {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
    }


@pytest.fixture
def server(app_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    running = Server(app_env, tmp_path)
    try:
        yield running
    finally:
        running.stop()


def statuses(url: str, headers: dict[str, str], count: int = 60) -> list[int]:
    """``count`` requests, six at a time on fresh connections (gunicorn's sync workers close
    each one), so the workers share them."""

    def one(_: int) -> int:
        return httpx.get(url, headers=headers, timeout=10).status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        return list(pool.map(one, range(count)))


ACCESS_LINE = re.compile(r"ACCESS <(\d+)> (\d{3}) GET (\S+)$", re.M)


def answers_by_worker(
    server: Server, url: str, headers: dict[str, str]
) -> dict[int, frozenset[int]]:
    """Send requests until every worker has answered at least one (its pid is in the access
    log line); return each worker's statuses for ``url``'s path."""
    path = httpx.URL(url).path
    start = server.log.stat().st_size
    answers: dict[int, set[int]] = {}
    for _ in range(10):
        statuses(url, headers, 30)
        time.sleep(0.2)  # let the last access lines reach the file
        with server.log.open() as log:
            log.seek(start)
            answers = {}
            for pid, status, logged_path in ACCESS_LINE.findall(log.read()):
                if logged_path == path:
                    answers.setdefault(int(pid), set()).add(int(status))
        if len(answers) == WORKERS:
            return {pid: frozenset(codes) for pid, codes in answers.items()}
    raise AssertionError(f"only {len(answers)} of {WORKERS} workers answered: {answers}")


def basic(user: str, key: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{key}".encode()).decode()}


# -- revocation reaches every worker on the next request ---------------------------------------


def test_a_revoked_key_is_refused_by_every_worker_on_the_next_request(
    server: Server, newsletter_service: Any
) -> None:
    key = newsletter_service.admin.create_api_key("revoke-me").key
    headers = {"Authorization": f"Bearer {key}"}
    status = server.base + API + "/status"
    assert set(answers_by_worker(server, status, headers).values()) == {frozenset({200})}
    newsletter_service.admin.revoke_api_key("revoke-me")
    assert set(answers_by_worker(server, status, headers).values()) == {frozenset({401})}
    assert set(statuses(server.base + API + "/subscribers", headers, 12)) == {401}


def test_cleared_listsource_credentials_are_refused_by_every_worker(
    server: Server, newsletter_service: Any
) -> None:
    newsletter_service.admin.set_listsource_credentials(
        LISTSOURCE_USER, "listsource-key-0123456789"
    )
    headers = basic(LISTSOURCE_USER, "listsource-key-0123456789")
    url = server.base + "/api/listsource/api/lists"
    assert set(answers_by_worker(server, url, headers).values()) == {frozenset({200})}
    newsletter_service.admin.disable_listsource()
    # with no credentials the list-source surface is switched off: it answers 404
    assert set(answers_by_worker(server, url, headers).values()) == {frozenset({404})}


def test_a_disabled_connection_token_is_refused_by_every_worker(
    server: Server, newsletter_service: Any
) -> None:
    token = "connection-token-0123456789abcdef"
    newsletter_service.admin.set_connection(
        platform_base="https://platform.example", transport="events", token=token
    )
    headers = {"Authorization": f"Bearer {token}"}
    url = server.base + "/api/export/events?after_id=0&limit=10"
    assert set(answers_by_worker(server, url, headers).values()) == {frozenset({200})}
    newsletter_service.admin.disable_connection()
    # with no active connection the export surface is switched off: it answers 404
    assert set(answers_by_worker(server, url, headers).values()) == {frozenset({404})}


# -- no secret in any log ------------------------------------------------------------------------


def test_no_secret_or_token_appears_in_any_log_of_a_full_run(
    server: Server,
    newsletter_service: Any,
    newsletter_settings: Any,
    app_env: dict[str, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # this process too: service calls, SQLAlchemy, the runner
    secrets: dict[str, str] = {
        "site secret": newsletter_settings.site_secret.get_secret_value(),
    }
    key = newsletter_service.admin.create_api_key("full-run").key
    secrets["api key"] = key
    auth = {"Authorization": f"Bearer {key}"}
    base = server.base

    # signups, reads and changes through the API
    emails = [f"reader{n}@example.org" for n in range(6)]
    for email in emails:
        assert httpx.post(
            base + API + "/subscribers", json={"email": email}, headers=auth
        ).is_success
    assert httpx.get(base + API + "/subscribers?limit=2", headers=auth).status_code == 200
    cursor = httpx.get(base + API + "/subscribers?limit=2", headers=auth).json()["next_cursor"]
    assert httpx.get(base + API + f"/subscribers?cursor={cursor}", headers=auth).is_success
    assert httpx.get(base + API + f"/subscribers/{emails[0]}", headers=auth).is_success
    patch = {"first_name": "Ada"}
    assert httpx.patch(
        base + API + f"/subscribers/{emails[1]}", json=patch, headers=auth
    ).is_success
    assert httpx.get(base + API + "/status", headers=auth).is_success
    assert (
        httpx.get(base + API + "/status", headers={"Authorization": "Bearer wrong"}).status_code
        == 401
    )

    # every link token issued, used through the reader links (whatever answers them) and the
    # service; confirm half the addresses
    for email in emails:
        record = newsletter_service.subscribers.get(email)
        for kind in ("confirm", "unsubscribe", "profile"):
            token = getattr(record, f"{kind}_token")
            secrets[f"{kind} token of {email}"] = token
            httpx.get(f"{base}/{kind}/{token}?utm=x")
    for email in emails[:3]:
        newsletter_service.subscribers.confirm_by_token(secrets[f"confirm token of {email}"])
    newsletter_service.subscribers.unsubscribe_by_token(
        secrets[f"unsubscribe token of {emails[5]}"]
    )

    # list-source surface with its own credentials
    list_key = "listsource-secret-key-0123456789"
    secrets["list-source key"] = list_key
    newsletter_service.admin.set_listsource_credentials(LISTSOURCE_USER, list_key)
    for path in ("/api/health", "/api/lists", "/api/campaigns", "/api/subscribers"):
        httpx.get(base + "/api/listsource" + path, headers=basic(LISTSOURCE_USER, list_key))
    httpx.get(base + "/api/listsource/api/lists", headers=basic(LISTSOURCE_USER, "wrong-key-0"))

    # a digest run (the CLI), then sync everything to a local HTTPS receiver with the
    # connection's token: once through the CLI, once in this process
    content = tmp_path / "content.json"
    content.write_text(json.dumps(sample_issue_content()), encoding="utf-8")
    cli_env = {**os.environ, **app_env}
    outputs: list[str] = []
    digest = subprocess.run(
        [*CLI, "digest", "--kind", "manual", "--content", str(content)],
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert digest.returncode == 0, digest.stderr
    outputs += [digest.stdout, digest.stderr]

    receiver = TlsReceiver(tmp_path)
    try:
        connection_token = "platform-connection-token-0123456789"
        secrets["connection token"] = connection_token
        newsletter_service.admin.set_connection(
            platform_base=receiver.base, transport="events", token=connection_token
        )
        export = {"Authorization": f"Bearer {connection_token}"}
        assert httpx.get(base + "/api/export/events?after_id=0", headers=export).is_success
        httpx.get(base + "/api/export/rollups?from=2026-01-01&to=2026-01-02", headers=export)
        receiver.script = ["500"]  # one failed attempt: error paths log too
        sync = subprocess.run(
            [*CLI, "sync", "--once"],
            env={**cli_env, "SSL_CERT_FILE": str(receiver.ca_file)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert sync.returncode == 1, sync.stderr  # the failed attempt
        outputs += [sync.stdout, sync.stderr]
        os.environ["SSL_CERT_FILE"] = str(receiver.ca_file)
        try:
            runner = SyncRunner(newsletter_service, periodic_tasks=[])
            runner.run_once()
            runner.close()
        finally:
            del os.environ["SSL_CERT_FILE"]
        delivered = [r for r in receiver.received if r.headers.get("Authorization")]
        assert delivered, "nothing reached the receiver: the run did not exercise sync"
        assert delivered[0].headers["Authorization"] == f"Bearer {connection_token}"
    finally:
        receiver.close()

    logs = {
        "gunicorn (access, error and Python logging at DEBUG)": server.stop(),
        "CLI and runner output": "\n".join(outputs),
        "this process's logging at DEBUG": "\n".join(
            f"{r.name} {r.levelname} {r.getMessage()} {r.exc_text or ''}"
            for r in caplog.records
            # (not this test's own HTTP client logging the reader links it requested)
            if not (r.name == "httpx" and base in r.getMessage())
        ),
    }
    served = logs["gunicorn (access, error and Python logging at DEBUG)"]
    assert "GET /api/newsletter/v1/subscribers" in served  # the access log is there ...
    assert "/confirm/[redacted]" in served  # ... with the reader links' tokens redacted
    assert "[DEBUG]" in served  # gunicorn logs at DEBUG
    assert any(r.levelno == logging.DEBUG for r in caplog.records)
    forms = {
        what + how: written
        for what, secret in secrets.items()
        for how, written in encoded_forms(secret).items()
    }
    # the list-source credentials as they crossed the wire, in the Basic header
    forms["list-source credentials (Basic)"] = basic(LISTSOURCE_USER, list_key)[
        "Authorization"
    ].removeprefix("Basic ")
    for where, text in logs.items():
        for what, written in forms.items():
            assert written not in text, f"the {what} appears in the {where}"


def encoded_forms(secret: str) -> dict[str, str]:
    """``secret`` as a log line could carry it: as is, URL-encoded, base64 and JSON-escaped."""
    return {
        "": secret,
        " (URL-encoded)": quote(secret, safe=""),
        " (URL-encoded, form)": quote_plus(secret),
        " (base64)": base64.b64encode(secret.encode()).decode().rstrip("="),
        " (base64, URL-safe)": base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
        " (JSON)": json.dumps(secret)[1:-1],
    }


def test_encoded_forms_find_what_a_log_could_carry() -> None:
    secret = "a+b/c=d e:f"
    forms = encoded_forms(secret)
    assert "a%2Bb%2Fc%3Dd%20e%3Af" in forms.values()
    assert "a%2Bb%2Fc%3Dd+e%3Af" in forms.values()
    logged = f"Authorization: Basic {base64.b64encode(secret.encode()).decode()}"
    assert forms[" (base64)"] in logged
