"""Reliability: the database stops mid-run and comes back (issue 10, outage).

Runs against a private PostgreSQL server so the shared one is never disturbed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine

from .pgcluster import PrivatePostgres

STATUS = "/api/newsletter/v1/status"


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    server.start()
    try:
        yield server
    finally:
        server.destroy()


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
