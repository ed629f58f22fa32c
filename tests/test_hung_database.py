"""A hung database gives 503 ``db_unavailable`` within the configured bounds, never a hang.

PostgreSQL: a private server is stopped whole (``SIGSTOP`` to the postmaster and every
backend), so its kernel still accepts connections and acknowledges packets but nothing answers:
only the client's own bounds can end a wait. The real service runs under gunicorn; while the
server is stopped, ``/status`` and ``POST /subscribers`` answer 503 within seconds and no
worker is killed; after ``SIGCONT`` service resumes by itself. The sync runner reports the
outage instead of hanging, and goes on delivering once the server is back.

SQLite: a writer holding the database lock longer than the busy timeout makes a write request
answer 503 within that timeout, and the next one succeeds once the lock is released.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import falcon.testing
import httpx
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.service.events import queue_event
from newsletter_connector.settings import Settings, SettingsError

from . import sync_payloads as p
from .conftest import free_port
from .delivery_checks import assert_every_event_once_or_resent_whole
from .pgcluster import PrivatePostgres
from .servers import wait_until_listening
from .test_outage import undelivered, wait_until
from .tls_receiver import TlsReceiver

STATUS = "/api/newsletter/v1/status"
SUBSCRIBERS = "/api/newsletter/v1/subscribers"
TOKEN = "platform-token-0123456789"

#: Short bounds so a stopped server is noticed in seconds.
TIMEOUTS = {
    "db_connect_timeout": 2,
    "db_statement_timeout": 1.0,
    "db_lock_timeout": 1.0,
    "db_reply_timeout": 2.0,
}
#: The longest a request may take with the server stopped: a round trip given up on (the
#: connection in hand, or the idle ping of a pooled one), then one connection attempt.
HUNG_ANSWER_SECONDS = TIMEOUTS["db_reply_timeout"] + TIMEOUTS["db_connect_timeout"] + 2.0


def timeout_env() -> dict[str, str]:
    return {f"NEWSLETTER_{name.upper()}": str(value) for name, value in TIMEOUTS.items()}


@contextmanager
def paused(server: PrivatePostgres) -> Iterator[None]:
    server.pause()
    try:
        yield
    finally:
        server.resume()  # never leave a stopped server behind, whatever failed


def service_on(server: PrivatePostgres, newsletter_settings: Any) -> NewsletterService:
    settings = newsletter_settings.model_copy(update={"database_url": server.url, **TIMEOUTS})
    service = NewsletterService.build(settings)
    service.initialise()
    return service


def child_pids(parent: int) -> set[int]:
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text()
    return {int(pid) for pid in children.split()}


def timed(call: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_gunicorn_answers_503_while_the_server_is_stopped_and_resumes_by_itself(
    private_postgres: PrivatePostgres, newsletter_settings: Any, tmp_path: Path
) -> None:
    service = service_on(private_postgres, newsletter_settings)
    key = service.admin.create_api_key("hung").key
    service.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        timeout_env(),
        PYTHONUNBUFFERED="1",
        NEWSLETTER_DATABASE_URL=private_postgres.url,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "newsletter_connector", "serve", "--workers", "1"]
    command += ["--bind", f"127.0.0.1:{port}"]
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("w") as log:  # a file: a full pipe would block gunicorn
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    headers = {"Authorization": f"Bearer {key}"}
    client = httpx.Client(base_url=base, headers=headers, timeout=15.0)
    try:
        wait_until_listening(base + "/", server)
        assert client.get(STATUS).status_code == 200
        assert client.post(SUBSCRIBERS, json={"email": "before@example.org"}).status_code == 201
        workers = child_pids(server.pid)
        assert len(workers) == 1

        with paused(private_postgres):
            # Several rounds: the connections in hand, the pool's, then fresh connects.
            for attempt in range(3):
                signup = {"email": f"during{attempt}@example.org"}
                for name, call in (
                    ("status", partial(client.get, STATUS)),
                    ("signup", partial(client.post, SUBSCRIBERS, json=signup)),
                ):
                    response, seconds = timed(call)
                    assert response.status_code == 503, (name, response.text)
                    assert response.json()["error"] == "db_unavailable"
                    assert response.headers["retry-after"]
                    assert seconds < HUNG_ANSWER_SECONDS, (name, seconds)

        assert wait_until(lambda: client.get(STATUS).status_code == 200, timeout=20)
        assert client.get(STATUS).json()["key"] == "hung"
        assert client.post(SUBSCRIBERS, json={"email": "after@example.org"}).status_code == 201
        assert child_pids(server.pid) == workers  # the same worker all along
    finally:
        client.close()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    output = log_path.read_text()
    assert "WORKER TIMEOUT" not in output
    assert "Traceback" not in output


def test_the_sync_runner_reports_a_stopped_server_and_goes_on_delivering(
    private_postgres: PrivatePostgres, newsletter_settings: Any, tmp_path: Path
) -> None:
    service = service_on(private_postgres, newsletter_settings)
    with service.storage.transaction() as uow:
        ids = [
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
            for n in range(600)
        ]
    receiver = TlsReceiver(tmp_path)
    receiver.default = "slow"
    receiver.slow_seconds = 0.1
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        timeout_env(),
        NEWSLETTER_DATABASE_URL=private_postgres.url,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
        SSL_CERT_FILE=str(receiver.ca_file),
    )
    command = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.2"]
    command += ["--request-deadline", "2", "--lease-margin", "0.5"]
    log_path = tmp_path / "runner.log"
    log = log_path.open("w")  # a file: a full pipe would block the runner
    runner = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        receiver.wait_for(2)
        with paused(private_postgres):
            saw_outage = wait_until(
                lambda: "database is unavailable" in log_path.read_text(),
                timeout=3 * HUNG_ANSWER_SECONDS,
            )
            assert runner.poll() is None, "the runner died with the database"
        assert saw_outage, "the runner hung on the stopped server instead of reporting it"
        assert wait_until(lambda: set(receiver.event_ids()) >= set(ids), timeout=90)
        assert wait_until(lambda: undelivered(service) == 0, timeout=30)
        assert runner.poll() is None  # the same process all along
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
        receiver.close()
        log.close()
    assert runner.returncode == 0
    assert_every_event_once_or_resent_whole([r.body for r in receiver.received], ids)
    assert TOKEN not in log_path.read_text()
    service.close()


@contextmanager
def write_lock_held(database: str, seconds: float) -> Iterator[None]:
    """Another connection holds the SQLite write lock (``BEGIN IMMEDIATE``) for ``seconds``."""
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(seconds, holder.rollback)
    release.start()
    try:
        yield
    finally:
        release.join()
        holder.close()


def test_sqlite_writer_holding_the_lock_gives_503_within_the_busy_timeout(
    newsletter_settings: Any, newsletter_database_url: str
) -> None:
    if not newsletter_database_url.startswith("sqlite"):
        pytest.skip("SQLite's busy timeout")
    settings = newsletter_settings.model_copy(update={"db_lock_timeout": 1.0})
    service = NewsletterService.build(settings)
    service.initialise()
    key = service.admin.create_api_key("locked").key
    client = falcon.testing.TestClient(create_app(service=service))
    headers = {"Authorization": f"Bearer {key}"}
    database = str(make_engine(newsletter_database_url).url.database)
    try:
        with write_lock_held(database, seconds=4.0):
            started = time.monotonic()
            locked = client.simulate_post(
                SUBSCRIBERS, json={"email": "locked@example.org"}, headers=headers
            )
            seconds = time.monotonic() - started
            assert locked.status_code == 503, locked.text
            assert locked.json["error"] == "db_unavailable"
            assert seconds < 1.0 + 1.5, seconds
            # Readers are not writers: the key check still answers while the lock is held.
            assert client.simulate_get(STATUS, headers=headers).status_code == 200
        created = client.simulate_post(
            SUBSCRIBERS, json={"email": "locked@example.org"}, headers=headers
        )
        assert created.status_code == 201
    finally:
        service.close()


def test_postgresql_lock_wait_gives_503_within_the_lock_timeout(
    newsletter_settings: Any, newsletter_database_url: str
) -> None:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL's lock_timeout")
    settings = newsletter_settings.model_copy(update={"db_lock_timeout": 1.0})
    service = NewsletterService.build(settings)
    service.initialise()
    key = service.admin.create_api_key("locked").key
    client = falcon.testing.TestClient(create_app(service=service))
    headers = {"Authorization": f"Bearer {key}"}
    holder = make_engine(newsletter_database_url).connect()
    try:
        holder.exec_driver_sql("LOCK TABLE nc_subscribers IN ACCESS EXCLUSIVE MODE")
        release = threading.Timer(4.0, holder.rollback)
        release.start()
        started = time.monotonic()
        locked = client.simulate_post(
            SUBSCRIBERS, json={"email": "locked@example.org"}, headers=headers
        )
        seconds = time.monotonic() - started
        release.join()
        assert locked.status_code == 503, locked.text
        assert locked.json["error"] == "db_unavailable"
        assert seconds < 1.0 + 1.5, seconds
        created = client.simulate_post(
            SUBSCRIBERS, json={"email": "locked@example.org"}, headers=headers
        )
        assert created.status_code == 201
    finally:
        holder.close()
        service.close()


def test_a_full_pool_fails_within_the_connect_timeout(newsletter_database_url: str) -> None:
    from newsletter_connector.plugins.sql_store.engine import DbTimeouts

    engine = make_engine(
        newsletter_database_url, timeouts=DbTimeouts(connect=2), pool_size=1, max_overflow=0
    )
    storage = SqlStorage(engine)
    try:
        with engine.connect():  # the pool's only connection, held
            started = time.monotonic()
            with pytest.raises(DbUnavailable), storage.transaction(write=False):
                pass
            assert time.monotonic() - started < 2 + 1.5
    finally:
        storage.close()


def test_the_timeouts_are_settings_and_the_reply_bound_outlasts_statements() -> None:
    base = {"NEWSLETTER_BASE_URL": "https://example.org"}
    defaults = Settings.load(base)
    assert defaults.db_statement_timeout < defaults.db_reply_timeout < 30  # gunicorn's timeout
    tuned = Settings.load({**base, **timeout_env()})
    assert (tuned.db_connect_timeout, tuned.db_reply_timeout) == (2, 2.0)
    with pytest.raises(SettingsError, match=r"db_reply_timeout.*db_statement_timeout"):
        Settings.load(
            {**base, "NEWSLETTER_DB_STATEMENT_TIMEOUT": "10", "NEWSLETTER_DB_REPLY_TIMEOUT": "5"}
        )
