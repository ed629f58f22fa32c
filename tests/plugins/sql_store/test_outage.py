"""Reliability: the database stops mid-run and comes back.

Runs against a private PostgreSQL server so the shared one is never disturbed: the API answers
503 ``db_unavailable`` while it is down (status and the subscriber endpoints, which change
nothing), the sync runner keeps running and resumes, nothing is lost, and nothing restarts.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from tests.support.outage_runner import sync_runner, undelivered, wait_until_answered
from tests.support.pgcluster import PrivatePostgres

# Each test stages an outage of a private PostgreSQL server of its own
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

STATUS = "/api/newsletter/v1/status"


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
    with sync_runner(service, tmp_path, events=1500, slow_seconds=0.15) as sync:
        sync.receiver.wait_for(3)
        private_postgres.stop()
        time.sleep(2.5)  # the runner keeps looping against a dead database
        assert sync.process.poll() is None, "the runner died with the database"
        private_postgres.start()
        assert wait_until_answered(
            lambda: set(sync.receiver.event_ids()) >= set(sync.ids), timeout=60
        )
        assert wait_until_answered(lambda: undelivered(service) == 0, timeout=20)
        assert sync.process.poll() is None  # the same process all along: no restart needed
        sync.stop()
    assert "sync loop: the database is unavailable" in sync.log()  # it saw the outage and waited
    sync.assert_delivered_cleanly()
    service.close()
