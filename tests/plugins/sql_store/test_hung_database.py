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

import json
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
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from sqlalchemy.engine import make_url

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.errors import DbUnavailable
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.settings import Settings, SettingsError
from tests.support.admin import PASSWORD, get_page, sign_in
from tests.support.outage_runner import sync_runner, undelivered, wait_until_answered
from tests.support.pages_helpers import open_form
from tests.support.pgcluster import PrivatePostgres
from tests.support.servers import wait_until_listening
from tests.support.waiting import free_port

pytestmark = pytest.mark.system

STATUS = "/api/newsletter/v1/status"
SUBSCRIBERS = "/api/newsletter/v1/subscribers"

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


@pytest.mark.database_independent  # a private PostgreSQL server
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

        assert wait_until_answered(lambda: client.get(STATUS).status_code == 200, timeout=20)
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


@pytest.mark.database_independent  # a private PostgreSQL server
def test_the_sync_runner_reports_a_stopped_server_and_goes_on_delivering(
    private_postgres: PrivatePostgres, newsletter_settings: Any, tmp_path: Path
) -> None:
    service = service_on(private_postgres, newsletter_settings)
    with sync_runner(service, tmp_path, events=600, slow_seconds=0.1, env=timeout_env()) as sync:
        sync.receiver.wait_for(2)
        with paused(private_postgres):
            saw_outage = wait_until_answered(
                lambda: "database is unavailable" in sync.log(), timeout=3 * HUNG_ANSWER_SECONDS
            )
            assert sync.process.poll() is None, "the runner died with the database"
        assert saw_outage, "the runner hung on the stopped server instead of reporting it"
        assert wait_until_answered(
            lambda: set(sync.receiver.event_ids()) >= set(sync.ids), timeout=90
        )
        assert wait_until_answered(lambda: undelivered(service) == 0, timeout=30)
        assert sync.process.poll() is None  # the same process all along
        sync.stop()
    sync.assert_delivered_cleanly()
    service.close()


@contextmanager
def write_lock_held(database_url: str, seconds: float) -> Iterator[None]:
    """SQLite: another connection holds the write lock (``BEGIN IMMEDIATE``) for ``seconds``
    or until the block ends."""
    holder = sqlite3.connect(
        str(make_url(database_url).database), isolation_level=None, check_same_thread=False
    )
    holder.execute("BEGIN IMMEDIATE")
    with released_after(seconds, holder.rollback):
        yield
    holder.close()


@contextmanager
def table_lock_held(database_url: str, seconds: float) -> Iterator[None]:
    """A database server: another connection holds the subscribers table locked for
    ``seconds`` or until the block ends (on MySQL and MariaDB a metadata lock, whose wait
    ``lock_wait_timeout`` bounds, as a migration's ``ALTER TABLE`` takes)."""
    engine = make_engine(database_url)
    with engine.connect() as holder:
        if engine.dialect.name == "postgresql":
            holder.exec_driver_sql("LOCK TABLE nc_subscribers IN ACCESS EXCLUSIVE MODE")
            release = holder.rollback
        else:
            holder.exec_driver_sql("LOCK TABLES nc_subscribers WRITE")

            def release() -> None:
                holder.exec_driver_sql("UNLOCK TABLES")

        with released_after(seconds, release):
            yield
    engine.dispose()


@contextmanager
def released_after(seconds: float, release: Any) -> Iterator[None]:
    """Calls ``release`` once: after ``seconds``, or on leaving the block if that is sooner."""
    guard = threading.Lock()
    released: list[bool] = []

    def release_once() -> None:
        with guard:
            if not released:
                released.append(True)
                release()

    timer = threading.Timer(seconds, release_once)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        release_once()


def test_a_lock_held_past_the_lock_timeout_gives_503_within_it_then_service_resumes(
    newsletter_settings: Any, newsletter_database_url: str, newsletter_storage: Any
) -> None:
    """(``newsletter_storage`` empties the session database afterwards: this test's service
    has its own store, with a short lock timeout.)"""
    lock_timeout = 1.0
    settings = newsletter_settings.model_copy(update={"db_lock_timeout": lock_timeout})
    service = NewsletterService.build(settings)
    service.initialise()
    key = service.admin.create_api_key("locked").key
    client = falcon.testing.TestClient(create_app(service=service))
    headers = {"Authorization": f"Bearer {key}"}
    held = write_lock_held if newsletter_database_url.startswith("sqlite") else table_lock_held
    signup = {"email": "locked@example.org"}
    try:
        with held(newsletter_database_url, seconds=4 * lock_timeout):
            started = time.monotonic()
            locked = client.simulate_post(SUBSCRIBERS, json=signup, headers=headers)
            seconds = time.monotonic() - started
            assert locked.status_code == 503, locked.text
            assert locked.json["error"] == "db_unavailable"
            # On SQLite the best-effort record of the key's use waits for the same writer
            # lock first (then gives up), so the 503 comes after two lock waits there.
            waits = 2 if newsletter_database_url.startswith("sqlite") else 1
            assert seconds < waits * lock_timeout + 1.5, seconds
            # The key check does not wait on the writer's lock.
            assert client.simulate_get(STATUS, headers=headers).status_code == 200
        created = client.simulate_post(SUBSCRIBERS, json=signup, headers=headers)
        assert created.status_code == 201
    finally:
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


def test_a_statement_past_the_statement_timeout_gives_db_unavailable_except_in_migrations(
    newsletter_database_url: str,
) -> None:
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL's statement_timeout")
    from newsletter_connector.plugins.sql_store.engine import DbTimeouts, unbounded_statements

    engine = make_engine(newsletter_database_url, timeouts=DbTimeouts(statement=0.5, reply=1.0))
    storage = SqlStorage(engine)
    try:
        started = time.monotonic()
        with pytest.raises(DbUnavailable), storage.transaction(write=False) as uow:
            uow.connection.exec_driver_sql("SELECT pg_sleep(3)")
        assert time.monotonic() - started < 0.5 + 1.5
        with engine.begin() as connection, unbounded_statements(connection):
            # Past both the statement and the reply bound: a migration's index build.
            connection.exec_driver_sql("SELECT pg_sleep(1.5)")
        with engine.connect() as connection:  # the bounds are back for everything else
            assert connection.exec_driver_sql("SHOW statement_timeout").scalar() == "500ms"
            assert getattr(connection.connection.dbapi_connection, "reply_timeout", None) == 1.0
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


#: The longest a short read (the key check, a reader page's record, the admin session, a
#: public POST's rate-limit counter, the outbox figures of a scrape) may take with the server
#: stopped, on connections already open, whatever ``db_reply_timeout`` is.
SHORT_READ_SECONDS = 5.0
METRICS_TOKEN = "metrics-token-0123456789abcdef"
#: Settings for :func:`short_read_calls`: a scrape path, and limits the repeated calls stay under.
SHORT_READ_SETTINGS = {
    "metrics_token": SecretStr(METRICS_TOKEN),
    "rate_limit_signup": 1000,
    "rate_limit_analytics": 1000,
}
#: SQLite counts its busy timeout in the sleeps it asked for, not by the clock, so on a loaded
#: machine a 3 s wait runs longer; this bound stays far below the test's ``db_lock_timeout``.
SQLITE_SHORT_WAIT_SECONDS = 8.0
SQLITE_LOCK_TIMEOUT = 20.0
PAGEVIEW = {"type": "pageview", "visitor_id": "v" * 16, "session_id": "s" * 16, "path": "/"}


def short_read_calls(service: NewsletterService) -> dict[str, Any]:
    """One request per kind of short read, through ``create_app``, each answering now."""
    key = service.admin.create_api_key("short").key
    client = falcon.testing.TestClient(create_app(service=service))
    created = client.simulate_post(
        SUBSCRIBERS, json={"email": "reader@example.org"}, headers=bearer(key)
    )
    assert created.status_code == 201, created.text
    token = service.subscribers.get("reader@example.org").profile_token
    service.admin_access.create_user("ada", PASSWORD)
    session = sign_in(client, "ada")
    form = open_form(client, "/signup")
    return {
        "api key check": partial(client.simulate_get, STATUS, headers=bearer(key)),
        "reader page": partial(client.simulate_get, f"/profile/{token}"),
        "admin session": partial(get_page, client, "/admin", session),
        "analytics event": partial(
            client.simulate_post,
            "/analytics/collect",
            body=json.dumps(PAGEVIEW),
            headers={"Content-Type": "text/plain"},
        ),
        "signup form": partial(
            form.post, client, "/signup", {"email": "form@example.org", "zip": ""}
        ),
        "metrics scrape": partial(client.simulate_get, "/metrics", headers=bearer(METRICS_TOKEN)),
    }


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def outbox_status_up(scrape: Any) -> float:
    """``newsletter_outbox_status_up`` of a ``/metrics`` answer."""
    assert scrape.status_code == 200, scrape.text
    for family in text_string_to_metric_families(scrape.text):
        if family.name == "newsletter_outbox_status_up":
            return float(family.samples[0].value)
    raise AssertionError("no newsletter_outbox_status_up")


@pytest.mark.database_independent  # a private PostgreSQL server
def test_short_reads_answer_503_within_seconds_on_open_connections_of_a_stopped_server(
    private_postgres: PrivatePostgres, newsletter_settings: Any
) -> None:
    """The default bounds (a 20 s reply bound sized for the longest statement): a stopped
    server still costs the key check, a reader page, the admin gate, an analytics event and a
    form POST (their rate-limit counter) under 5 s each, on the connections they already hold
    (each kind in its own outage: the first failure gives up the pool, and a new connection
    waits ``db_connect_timeout``). A scrape answers within it too, reporting the outbox
    figures down."""
    settings = newsletter_settings.model_copy(
        update={"database_url": private_postgres.url, **SHORT_READ_SETTINGS}
    )
    assert settings.db_reply_timeout == 20.0 and settings.db_short_reply_timeout == 3.0
    service = NewsletterService.build(settings)
    service.initialise()
    try:
        calls = short_read_calls(service)
        for name, call in calls.items():
            assert wait_until_answered(
                lambda: all(c().status_code < 400 for c in calls.values()), timeout=20
            ), name  # every kind's connection open (again), and idle past the ping age next
            assert outbox_status_up(calls["metrics scrape"]()) == 1
            time.sleep(1.2)
            with paused(private_postgres):
                started = time.monotonic()
                response = call()
                seconds = time.monotonic() - started
            if name == "metrics scrape":
                assert outbox_status_up(response) == 0
            else:
                assert response.status_code == 503, (name, response.text)
            assert seconds < SHORT_READ_SECONDS, (name, seconds)
        assert wait_until_answered(lambda: calls["api key check"]().status_code == 200, 20)
    finally:
        service.close()


def test_sqlite_short_reads_wait_the_short_busy_timeout_for_a_held_write_lock(
    newsletter_settings: Any, newsletter_database_url: str, newsletter_storage: Any
) -> None:
    """SQLite: a writer holding the lock past every bound. Reads never wait on it (WAL): the
    key check, a reader page and a scrape answer at once; the rate-limit counter of an
    analytics event and of a form POST give up after ``db_short_reply_timeout`` rather than
    ``db_lock_timeout``; the dashboard (its session only read) answers after that short wait
    without keeping the figures it counted."""
    if not newsletter_database_url.startswith("sqlite"):
        pytest.skip("SQLite's busy timeout (PostgreSQL: the test above)")
    service = NewsletterService.build(
        newsletter_settings.model_copy(
            update={"db_lock_timeout": SQLITE_LOCK_TIMEOUT, **SHORT_READ_SETTINGS}
        )
    )
    try:
        calls = short_read_calls(service)
        with write_lock_held(newsletter_database_url, seconds=2 * SQLITE_LOCK_TIMEOUT):
            timings = {}
            for name, call in calls.items():
                started = time.monotonic()
                response = call()
                timings[name] = (response.status_code, time.monotonic() - started)
        assert timings["api key check"][0] == 200
        assert timings["reader page"][0] == 200
        assert timings["metrics scrape"][0] == 200
        for writer in ("analytics event", "signup form"):
            assert timings[writer][0] == 503, timings
            assert 2.5 < timings[writer][1] < SQLITE_SHORT_WAIT_SECONDS, timings
        assert timings["admin session"][0] == 200, timings
        assert 2.5 < timings["admin session"][1] < SQLITE_SHORT_WAIT_SECONDS, timings
        assert all(seconds < SQLITE_SHORT_WAIT_SECONDS for _, seconds in timings.values()), timings
        assert calls["admin session"]().status_code == 200
    finally:
        service.close()
