"""The service and its sync runners through a real PgBouncer in transaction pooling mode.

PgBouncer (Debian's package) runs in front of a private PostgreSQL server, on a free loopback
port, with its own configuration and ``md5`` authentication file. With ``db_pgbouncer`` on,
``db upgrade`` and ``keys create`` run through it, then ``serve`` (gunicorn, two workers) takes
2,000 signups from several client threads while two ``sync`` runners deliver what they queue to
a local TLS receiver: every signup answers 201, and every queued event arrives exactly as
queued (at-least-once: a repeat is a whole batch sent again, same ids, same bodies). Without
the setting the same PgBouncer makes signups fail on server-side prepared statements, which is
why the setting exists.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import falcon.testing
import httpx
import psycopg
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.settings import Settings
from tests.support.delivery_checks import assert_every_event_once_or_resent_whole
from tests.support.pgbouncer import PrivatePgBouncer
from tests.support.pgcluster import PrivatePostgres
from tests.support.servers import serving_to_file
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import free_port, wait_until

pytestmark = pytest.mark.system

SUBSCRIBERS = "/api/newsletter/v1/subscribers"
SIGNUPS = 2000
CLIENT_THREADS = 6
TOKEN = "platform-token-pgbouncer-0123456789"
SITE_SECRET = "s" * 48


@pytest.fixture
def on_postgresql(newsletter_database_url: str) -> None:
    """Skip (before a private server is made) unless the suite runs on PostgreSQL."""
    if not newsletter_database_url.startswith("postgresql"):
        pytest.skip("PgBouncer fronts PostgreSQL")


@pytest.fixture
def bouncer(on_postgresql: None, private_postgres: PrivatePostgres) -> Iterator[Any]:
    server = PrivatePgBouncer(private_postgres.url, pool_mode="transaction", pool_size=8)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def environment(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        PYTHONUNBUFFERED="1",
        NEWSLETTER_DATABASE_URL=database_url,
        NEWSLETTER_BASE_URL="https://news.example.org",
        NEWSLETTER_SITE_SECRET=SITE_SECRET,
        **extra,
    )
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "newsletter_connector", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def queued_events(upstream_url: str) -> dict[str, dict[str, Any]]:
    """Every event in the outbox, read straight from PostgreSQL: id -> type and payload."""
    with psycopg.connect(upstream_url) as connection:
        rows = connection.execute(
            "SELECT event_id, event_type, payload FROM nc_outbox_events"
        ).fetchall()
    return {event_id: {"type": kind, "payload": payload} for event_id, kind, payload in rows}


def start_runner(env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.2"]
    with log_path.open("w") as log:  # a file: a full pipe would block the runner
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)


def stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


def test_serve_and_two_runners_through_pgbouncer_deliver_every_signup_exactly_as_queued(
    bouncer: PrivatePgBouncer, private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    env = environment(bouncer.url(), NEWSLETTER_DB_PGBOUNCER="true")
    upgraded = cli(env, "db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    created = cli(env, "keys", "create", "--label", "pgbouncer")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()

    receiver = TlsReceiver(tmp_path)
    settings = Settings.load(env)
    service = NewsletterService.build(settings)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    service.close()

    runner_env = {**env, "SSL_CERT_FILE": str(receiver.ca_file)}
    runners = [start_runner(runner_env, tmp_path / f"runner{n}.log") for n in (1, 2)]
    statuses: list[int] = []
    try:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        serve = [sys.executable, "-m", "newsletter_connector", "serve", "--workers", "2"]
        serve += ["--bind", f"127.0.0.1:{port}"]
        serve_log = tmp_path / "serve.log"
        with serving_to_file(serve, probe_url=base + "/", env=env, log_path=serve_log):
            headers = {"Authorization": f"Bearer {key}"}

            def sign_up(batch: range) -> list[int]:
                with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
                    return [
                        client.post(
                            SUBSCRIBERS, json={"email": f"reader{n}@example.org"}
                        ).status_code
                        for n in batch
                    ]

            batches = [range(i, SIGNUPS, CLIENT_THREADS) for i in range(CLIENT_THREADS)]
            with ThreadPoolExecutor(CLIENT_THREADS) as pool:
                for codes in pool.map(sign_up, batches):
                    statuses.extend(codes)
        serve_output = serve_log.read_text()

        assert len(statuses) == SIGNUPS
        assert {code for code in statuses if code != 201} == set(), sorted(set(statuses))
        queued = queued_events(private_postgres.url)
        assert len(queued) >= SIGNUPS  # one newsletter.signup each, at least
        assert wait_until(lambda: set(receiver.event_ids()) >= set(queued), timeout=60), (
            f"{len(set(queued) - set(receiver.event_ids()))} events never arrived"
        )
    finally:
        exit_codes = [stop(runner) for runner in runners]
        receiver.close()

    assert exit_codes == [0, 0]
    bodies = [r.body for r in receiver.received]
    assert_every_event_once_or_resent_whole(bodies, list(queued))
    for event in (event for body in bodies for event in body):
        assert event["type"] == queued[event["id"]]["type"]
        assert event["payload"] == queued[event["id"]]["payload"]
    logs = serve_output + "".join((tmp_path / f"runner{n}.log").read_text() for n in (1, 2))
    assert "Traceback" not in logs
    assert "prepared statement" not in logs
    assert bouncer.password not in logs
    assert TOKEN not in logs


def signup_statuses(settings: Any, count: int) -> list[int]:
    """``count`` signups from 8 threads through ``create_app`` on ``settings``: the statuses."""
    service = NewsletterService.build(settings)
    service.initialise()
    key = service.admin.create_api_key(f"pooled-{settings.db_pgbouncer}").key
    client = falcon.testing.TestClient(create_app(service=service))
    headers = {"Authorization": f"Bearer {key}"}

    def sign_up(n: int) -> int:
        email = {"email": f"r{n}-{settings.db_pgbouncer}@example.org"}
        return client.simulate_post(SUBSCRIBERS, json=email, headers=headers).status_code

    try:
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(sign_up, range(count)))
    finally:
        service.close()


def test_without_the_setting_transaction_pooling_breaks_prepared_statements(
    bouncer: PrivatePgBouncer, newsletter_settings: Any
) -> None:
    """Why ``db_pgbouncer`` exists: the same requests, the setting off, fail (and on, pass).
    PgBouncer ignores the ``options`` start-up parameter here, as operations.md used to
    advise, so what fails is the prepared statements."""
    bouncer.restart(ignore_startup_parameters="options")
    on_bouncer = newsletter_settings.model_copy(update={"database_url": bouncer.url()})
    without = signup_statuses(on_bouncer.model_copy(update={"db_pgbouncer": False}), 200)
    assert any(code >= 500 for code in without)
    assert set(signup_statuses(on_bouncer.model_copy(update={"db_pgbouncer": True}), 200)) == {201}


def test_the_role_timeouts_hold_through_pgbouncer_without_startup_options(
    bouncer: PrivatePgBouncer, private_postgres: PrivatePostgres, newsletter_settings: Any
) -> None:
    """Behind PgBouncer the package sends no start-up ``options`` (this PgBouncer would refuse
    them) and prepares nothing: the server's timeouts come from the role, as
    docs/operations.md says to set them."""
    with psycopg.connect(private_postgres.url, autocommit=True) as admin:
        admin.execute("ALTER ROLE postgres SET statement_timeout = '42s'")
    settings = newsletter_settings.model_copy(
        update={"database_url": bouncer.url(), "db_pgbouncer": True}
    )
    service = NewsletterService.build(settings)
    try:
        service.initialise()
        with service.storage.transaction(write=False) as uow:
            connection: Any = uow.connection  # type: ignore[attr-defined]
            shown = connection.exec_driver_sql("SHOW statement_timeout").scalar()
            prepare_threshold = connection.connection.dbapi_connection.prepare_threshold
    finally:
        service.close()
    assert shown == "42s"  # the role's, not db_statement_timeout's 15 s
    assert prepare_threshold is None
