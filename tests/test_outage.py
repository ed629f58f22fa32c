"""Reliability: the database stops mid-run and comes back (issue 10, outage).

Runs against a private PostgreSQL server so the shared one is never disturbed: the API answers
503 ``db_unavailable`` while it is down (status and the subscriber endpoints, which change
nothing), the sync runner keeps running and resumes, nothing is lost, and nothing restarts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import falcon.testing

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.service.events import queue_event

from . import sync_payloads as p
from .delivery_checks import assert_every_event_once_or_resent_whole
from .pgcluster import PrivatePostgres
from .tls_receiver import TlsReceiver

STATUS = "/api/newsletter/v1/status"
TOKEN = "platform-token-0123456789"


def test_api_answers_503_during_an_outage_and_recovers_without_restart(
    private_postgres: PrivatePostgres, newsletter_settings: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"database_url": private_postgres.url})
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 3}))
    service = NewsletterService.build(settings, storage=storage)
    service.initialise()
    key = service.admin.create_api_key("outage").key
    client = falcon.testing.TestClient(create_app(service=service))
    headers = {"Authorization": f"Bearer {key}"}
    assert client.simulate_get(STATUS, headers=headers).status_code == 200

    private_postgres.stop()
    for _ in range(3):
        down = client.simulate_get(STATUS, headers=headers)
        assert down.status_code == 503
        assert down.json["error"] == "db_unavailable"
        assert down.headers["retry-after"]

    private_postgres.start()
    up = client.simulate_get(STATUS, headers=headers)
    assert up.status_code == 200
    assert up.json == {"ok": True, "version": "v1", "key": "outage"}
    service.close()


SUBSCRIBERS = "/api/newsletter/v1/subscribers"


def test_subscriber_endpoints_answer_503_during_an_outage_and_change_nothing(
    private_postgres: PrivatePostgres, newsletter_settings: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"database_url": private_postgres.url})
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 3}))
    service = NewsletterService.build(settings, storage=storage)
    service.initialise()
    key = service.admin.create_api_key("outage").key
    client = falcon.testing.TestClient(create_app(service=service))
    headers = {"Authorization": f"Bearer {key}"}
    assert client.simulate_post(SUBSCRIBERS, json={"email": "a@example.org"}, headers=headers)

    private_postgres.stop()
    calls = [
        ("GET", SUBSCRIBERS, None),
        ("POST", SUBSCRIBERS, {"email": "during@example.org"}),
        ("GET", f"{SUBSCRIBERS}/a@example.org", None),
        ("PATCH", f"{SUBSCRIBERS}/a@example.org", {"first_name": "Ada"}),
        ("DELETE", f"{SUBSCRIBERS}/a@example.org", None),
    ]
    for method, path, body in calls:
        down = client.simulate_request(method, path, json=body, headers=headers)
        assert down.status_code == 503, (method, path, down.text)
        assert down.json["error"] == "db_unavailable"
        assert down.headers["retry-after"]

    private_postgres.start()
    listed = client.simulate_get(SUBSCRIBERS, headers=headers)
    assert listed.status_code == 200
    assert [c["email"] for c in listed.json["data"]] == ["a@example.org"]  # nothing changed
    assert listed.json["data"][0]["first_name"] is None
    created = client.simulate_post(
        SUBSCRIBERS, json={"email": "after@example.org"}, headers=headers
    )
    assert created.status_code == 201
    service.close()


def test_the_sync_runner_waits_out_an_outage_and_resumes_without_losing_anything(
    private_postgres: PrivatePostgres, newsletter_settings: Any, tmp_path: Path
) -> None:
    settings = newsletter_settings.model_copy(update={"database_url": private_postgres.url})
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 3}))
    service = NewsletterService.build(settings, storage=storage)
    service.initialise()
    with service.storage.transaction() as uow:
        ids = [
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
            for n in range(1500)
        ]
    receiver = TlsReceiver(tmp_path)
    receiver.default = "slow"
    receiver.slow_seconds = 0.15
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        NEWSLETTER_DATABASE_URL=settings.database_url,
        NEWSLETTER_BASE_URL=settings.base_url,
        NEWSLETTER_SITE_SECRET=settings.site_secret.get_secret_value(),
        SSL_CERT_FILE=str(receiver.ca_file),
    )
    command = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.2"]
    command += ["--request-deadline", "2", "--lease-margin", "0.5"]
    log = (tmp_path / "runner.log").open("w")  # a file: a full pipe would block the runner
    runner = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
    try:
        receiver.wait_for(3)
        private_postgres.stop()
        time.sleep(2.5)  # the runner keeps looping against a dead database
        assert runner.poll() is None, "the runner died with the database"
        private_postgres.start()
        assert wait_until(lambda: set(receiver.event_ids()) >= set(ids), timeout=60)
        assert wait_until(lambda: undelivered(service) == 0, timeout=20)
        assert runner.poll() is None  # the same process all along: no restart needed
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
        receiver.close()
        log.close()
    err = (tmp_path / "runner.log").read_text()
    assert runner.returncode == 0
    assert "sync loop: the database is unavailable" in err  # it saw the outage and waited
    assert_every_event_once_or_resent_whole([r.body for r in receiver.received], ids)
    assert TOKEN not in err
    service.close()


def undelivered(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.outbox.status().undelivered_events)


def wait_until(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except Exception:  # the database may still be coming up
            pass
        time.sleep(0.1)
    return bool(condition())
