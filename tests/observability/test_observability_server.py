"""Health, metrics and JSON logs through real processes: ``serve`` with two gunicorn workers
(figures summed across workers, also after a worker is killed; every log line JSON with no
token or address; the multiprocess directory removed at exit), ``/readyz`` while a private
PostgreSQL server is stopped and started again, and ``sync`` with ``--metrics-bind`` and
``log_format = json``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from newsletter_connector import NewsletterService
from tests.observability.test_metrics import METRICS_TOKEN, samples, value
from tests.packaging.test_examples import EXAMPLES, example_env
from tests.plugins.sql_store.test_hung_database import child_pids
from tests.support.servers import serving_to_file, wait_until_listening
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import free_port, wait_until
from tests.sync.test_sync_cli import TOKEN, connect, queue
from tests.sync.test_sync_cli import run as run_cli

pytestmark = pytest.mark.system

BEARER = {"Authorization": f"Bearer {METRICS_TOKEN}"}
CLI = [sys.executable, "-m", "newsletter_connector"]
EMAIL = "json.reader@example.org"
REQUESTS = 200


def base_env(settings: Any, tmp_path: Path, **extra: str) -> dict[str, str]:
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("NEWSLETTER_") and k != "PROMETHEUS_MULTIPROC_DIR"
    }
    environ.update(
        NEWSLETTER_DATABASE_URL=settings.database_url,
        NEWSLETTER_SITE_SECRET=settings.site_secret.get_secret_value(),
        NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS="true",  # served on loopback, as a local trial
        NEWSLETTER_METRICS_TOKEN=METRICS_TOKEN,
        NEWSLETTER_LOG_FORMAT="json",
        TMPDIR=str(tmp_path),
        **extra,
    )
    return environ


@contextmanager
def serving(env: dict[str, str], log: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``serve --workers 2`` until the block ends, its output in ``log`` (a pipe nobody reads
    would fill up and block the workers' logging)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [*CLI, "serve", "--workers", "2", "--bind", f"127.0.0.1:{port}"]
    with log.open("w") as output:
        process = subprocess.Popen(
            command, env=env, stdout=output, stderr=subprocess.STDOUT, text=True
        )
        try:
            wait_until_listening(base + "/readyz", process)
            yield base, process
        finally:
            process.terminate()
            process.wait(timeout=30)


def json_lines(output: str) -> list[dict[str, Any]]:
    """Every line of ``output`` parsed as one JSON object (fails on any other line)."""
    records = []
    for line in output.splitlines():
        if line.strip():
            record = json.loads(line)
            assert {"timestamp", "level", "logger", "message"} <= set(record), line
            records.append(record)
    return records


def healthz_until_both_workers_count(
    client: httpx.Client, base: str, directory: Path, at_least: int
) -> int:
    """GET ``/healthz`` at least ``at_least`` times and until both workers have counted one (a
    file each in the multiprocess directory: the kernel may hand one worker every connection
    for a while); how many were sent."""
    sent = 0
    while sent < at_least or len(list(directory.glob("counter_*.db"))) < 2:
        assert sent < at_least + 2000, "one worker answered every request"
        assert client.get(base + "/healthz").status_code == 200
        sent += 1
    return sent


def test_two_workers_sum_their_figures_and_log_json_lines(
    newsletter_service: NewsletterService, newsletter_settings: Any, tmp_path: Path
) -> None:
    api_key = newsletter_service.admin.create_api_key("json-logs").key
    record = newsletter_service.subscribers.subscribe({"email": EMAIL}).record
    env = base_env(newsletter_settings, tmp_path)
    log = tmp_path / "serve.log"
    with serving(env, log) as (base, process):
        assert wait_until(lambda: len(child_pids(process.pid)) == 2)  # the second may still boot
        workers = child_pids(process.pid)
        (directory,) = tmp_path.glob("newsletter-metrics-*")
        with httpx.Client(timeout=10) as client:  # gunicorn's sync workers close each connection
            sent = healthz_until_both_workers_count(client, base, directory, REQUESTS)
        httpx.get(f"{base}/confirm/{record.confirm_token}?email={EMAIL}", timeout=10)
        httpx.get(
            f"{base}/api/newsletter/v1/subscribers/{EMAIL}",
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": f"bot ({EMAIL})"},
            timeout=10,
        )
        assert len(list(directory.glob("counter_*.db"))) == 2  # one file per worker

        ok = {"route": "/healthz", "method": "GET", "status_class": "2xx"}
        for _ in range(6):  # whichever worker answers, it reports both workers' requests
            text = httpx.get(base + "/metrics", headers=BEARER, timeout=10).text
            assert value(text, "newsletter_http_requests_total", **ok) == sent
            assert value(text, "newsletter_http_request_duration_seconds_count", **ok) == sent
            assert value(text, "newsletter_outbox_unbatched_events") >= 1  # the signup's event
        for secret in (record.confirm_token, EMAIL, api_key, METRICS_TOKEN):
            assert secret not in text

        os.kill(sorted(workers)[0], signal.SIGKILL)  # gunicorn replaces it
        assert wait_until(lambda: len(child_pids(process.pid) - workers) == 1)
        assert wait_until(lambda: httpx.get(base + "/healthz", timeout=10).status_code == 200)
        text = httpx.get(base + "/metrics", headers=BEARER, timeout=10).text
        assert value(text, "newsletter_http_requests_total", **ok) >= sent  # kept
        assert httpx.get(base + "/metrics", timeout=10).status_code == 401
    output = log.read_text()
    assert not list(tmp_path.glob("newsletter-metrics-*"))  # removed at exit
    records = json_lines(output)
    access = [r for r in records if r["logger"] == "gunicorn.access"]
    assert len(access) >= sent
    assert {r["pid"] for r in access} >= workers  # each worker counted a request, so logged one
    first = access[0]
    assert {"method", "path", "status", "bytes", "duration_seconds", "user_agent"} <= set(first)
    assert any(r["logger"] == "gunicorn.error" for r in records)
    for secret in (record.confirm_token, EMAIL, api_key, METRICS_TOKEN, "127.0.0.1 -"):
        assert secret not in output


@pytest.mark.database_independent  # a private PostgreSQL server
def test_readyz_follows_a_stopped_and_restarted_postgresql(
    private_postgres: Any, newsletter_settings: Any, tmp_path: Path
) -> None:
    settings = newsletter_settings.model_copy(
        update={"database_url": private_postgres.url, "db_connect_timeout": 2}
    )
    NewsletterService.build(settings).initialise()
    env = base_env(settings, tmp_path, NEWSLETTER_DB_CONNECT_TIMEOUT="2")
    log = tmp_path / "serve.log"
    with serving(env, log) as (base, _):
        assert httpx.get(base + "/readyz", timeout=10).status_code == 200
        private_postgres.stop()
        time.sleep(1.1)  # past the cached answer
        for _ in range(4):
            started = time.monotonic()
            answer = httpx.get(base + "/readyz", timeout=10)
            assert time.monotonic() - started < 2 + 1
            assert (answer.status_code, answer.text) == (503, "not ready\n")
            assert httpx.get(base + "/healthz", timeout=10).status_code == 200
        text = httpx.get(base + "/metrics", headers=BEARER, timeout=10).text
        assert value(text, "newsletter_outbox_status_up") == 0
        assert value(text, "newsletter_http_unavailable_total", cause="db_unavailable") >= 1
        private_postgres.start()
        # Probe until the worker that saw the outage answers one (either worker may take any
        # probe): it logs that it is ready again.
        assert wait_until(
            lambda: (
                httpx.get(base + "/readyz", timeout=10).status_code == 200
                and "ready again" in log.read_text()
            )
        )
    records = json_lines(log.read_text())
    health = [r["message"] for r in records if r["logger"] == "newsletter_connector.web.health"]
    # each worker logs the change once, not once per probe
    assert 1 <= health.count("not ready: db_unavailable") <= 2
    assert 1 <= health.count("ready again: the database answers and its schema is current") <= 2


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


def test_sync_serves_its_counters_and_logs_json_lines(
    newsletter_service: NewsletterService,
    newsletter_settings: Any,
    receiver: TlsReceiver,
    tmp_path: Path,
) -> None:
    ids = queue(newsletter_service, 3)
    connect(newsletter_service, receiver)
    receiver.script = ["500"]  # the first attempt fails (a warning), the retry is not due
    env = base_env(
        newsletter_settings,
        tmp_path,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        SSL_CERT_FILE=str(receiver.ca_file),
    )
    once = run_cli(env, "sync", "--once")
    assert once.returncode == 1, once.stderr
    assert once.stdout == ""  # the report is a log record too
    records = json_lines(once.stderr)
    assert records[-1]["level"] == "ERROR"
    assert (
        records[-1]["message"]
        == "1 batch(es) failed this attempt (newsletter-connector outbox status)"
    )
    assert any(r["level"] == "WARNING" and "attempt 1 failed" in r["message"] for r in records)
    newsletter_service.admin.retry_outbox_now()

    # A runner that inherited the web workers' multiprocess directory neither reports their
    # series nor writes its own counters there (the web side would sum them).
    web_files = tmp_path / "web-metrics"
    web_files.mkdir()
    record = "from newsletter_connector.observability.instruments import record_request as r; "
    subprocess.run(
        [sys.executable, "-c", record + "r('/healthz', 'GET', 200, 0.1, cause=None)"],
        env={**env, "PROMETHEUS_MULTIPROC_DIR": str(web_files)},
        check=True,
        timeout=60,
    )
    web_series = sorted(web_files.iterdir())
    assert web_series
    port = free_port()
    command = [*CLI, "sync", "--poll-interval", "0.1", "--metrics-bind", f"127.0.0.1:{port}"]
    process = subprocess.Popen(
        command,
        env={**env, "PROMETHEUS_MULTIPROC_DIR": str(web_files)},
        stderr=subprocess.PIPE,
        text=True,
    )
    metrics = f"http://127.0.0.1:{port}/metrics"
    try:

        def delivered() -> float:
            try:
                text = httpx.get(metrics, headers=BEARER, timeout=5).text
            except httpx.TransportError:
                return -1  # not listening yet
            return value(text, "newsletter_sync_events_total", result="delivered")

        assert wait_until(lambda: delivered() == 3, timeout=60), (
            process.poll(),
            receiver.event_ids(),
        )
        assert receiver.event_ids() == ids + ids  # the refused attempt, then the retry
        scraped = httpx.get(metrics, headers=BEARER, timeout=5).text
        assert not [name for name, _ in samples(scraped) if name.startswith("newsletter_http")]
        assert sorted(web_files.iterdir()) == web_series
        assert httpx.get(metrics, timeout=5).status_code == 401
        assert httpx.get(f"http://127.0.0.1:{port}/other", headers=BEARER).status_code == 404
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    messages = [r["message"] for r in json_lines(err)]
    assert "sync runner started" in messages and "sync runner stopped" in messages
    for secret in (TOKEN, METRICS_TOKEN, "visitor@example.org"):
        assert secret not in once.stderr + once.stdout + err


def test_sync_metrics_bind_needs_a_token_and_an_address(
    newsletter_settings: Any, tmp_path: Path
) -> None:
    env = base_env(newsletter_settings, tmp_path, NEWSLETTER_BASE_URL=newsletter_settings.base_url)
    del env["NEWSLETTER_METRICS_TOKEN"]
    refused = run_cli(env, "sync", "--once", "--metrics-bind", "127.0.0.1:9")
    assert refused.returncode == 1
    assert "--metrics-bind needs the metrics_token setting (NEWSLETTER_METRICS_TOKEN)" in (
        refused.stderr
    )
    env["NEWSLETTER_METRICS_TOKEN"] = METRICS_TOKEN
    env["NEWSLETTER_LOG_FORMAT"] = "text"
    bad = run_cli(env, "sync", "--once", "--metrics-bind", "nonsense")
    assert bad.returncode == 1
    assert "error: --metrics-bind must be host:port, e.g. 127.0.0.1:9101, got 'nonsense'" in (
        bad.stderr
    )


def test_the_command_line_does_not_import_prometheus_client_before_serve_prepares_it() -> None:
    """Multiprocess mode is chosen when prometheus_client is imported: ``serve`` must set its
    directory first, so loading the command line must not import it."""
    probe = "import sys, newsletter_connector.cli; print('prometheus_client' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "False"


def test_standalone_example_sums_metrics_over_its_workers_and_logs_json(
    newsletter_settings: Any, tmp_path: Path
) -> None:
    """The example's gunicorn.conf.py does what ``serve`` does: a fresh multiprocess metrics
    directory (removed at exit; kept with its counts over a SIGHUP reload) and the JSON logger
    when the settings file asks for it."""
    port = free_port()
    token = "example-metrics-token-0123456789"
    settings_file = tmp_path / "settings.toml"
    settings_file.write_text('log_format = "json"\n')
    env = example_env(
        newsletter_settings,
        port,
        NEWSLETTER_METRICS_TOKEN=token,
        NEWSLETTER_CONFIG=str(settings_file),
        TMPDIR=str(tmp_path),
    )
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]
    log = tmp_path / "gunicorn.log"  # a pipe nobody reads would fill with access lines and block
    with serving_to_file(
        command, probe_url=base + "/readyz", env=env, log_path=log, cwd=EXAMPLES / "standalone"
    ) as process:
        assert wait_until(lambda: len(child_pids(process.pid)) == 2)  # the second may still boot
        (directory,) = tmp_path.glob("newsletter-metrics-*")
        with httpx.Client(timeout=90) as client:  # a loaded CI machine answers slowly
            sent = healthz_until_both_workers_count(client, base, directory, 20)
            scrapes = [
                client.get(base + "/metrics", headers={"Authorization": f"Bearer {token}"}).text
                for _ in range(4)
            ]
        assert len(list(directory.glob("counter_*.db"))) == 2
        workers = child_pids(process.pid)
        process.send_signal(signal.SIGHUP)  # new workers; the configuration is read again
        assert wait_until(lambda: not child_pids(process.pid) & workers, timeout=60)
        assert wait_until(lambda: len(child_pids(process.pid)) == 2, timeout=60)
        with httpx.Client(timeout=10) as client:
            reloaded = [
                client.get(base + "/metrics", headers={"Authorization": f"Bearer {token}"}).text
                for _ in range(4)
            ]
    ok = {"route": "/healthz", "method": "GET", "status_class": "2xx"}
    assert all(value(text, "newsletter_http_requests_total", **ok) == sent for text in scrapes)
    assert all(value(text, "newsletter_http_requests_total", **ok) == sent for text in reloaded)
    assert not list(tmp_path.glob("newsletter-metrics-*"))
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    assert all(json.loads(line)["level"] for line in lines)
    assert token not in "".join(lines)
