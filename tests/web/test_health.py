"""``/healthz`` and ``/readyz`` through the app: unauthenticated, tiny no-store bodies, HEAD too,
the readiness check cached for a second (one check however many probes), 503 with no detail
when the schema is not current, the database file is gone or the server does not answer. (Never
rate limited: tests/web/test_rate_limits.py. A stopped PostgreSQL under real gunicorn:
tests/observability/test_observability_server.py.)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import event, text

from newsletter_connector import NewsletterService, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine, short_read_engine
from newsletter_connector.plugins.sql_store.migrate import VERSION_TABLE
from newsletter_connector.testing.databases import migrated_database
from newsletter_connector.web import health

PREFIX = "/newsletter"


@pytest.fixture
def own_database(tmp_path: Path) -> Iterator[str]:
    """A migrated database of this test's own (its schema is changed by some tests)."""
    with migrated_database(tmp_path) as url:
        yield url


def client_on(
    settings: Any, url: str, *, initialise: bool = False
) -> tuple[falcon.testing.TestClient, NewsletterService]:
    service = NewsletterService.build(settings.model_copy(update={"database_url": url}))
    if initialise:
        service.initialise()
    return falcon.testing.TestClient(create_app(service=service)), service


def statements(storage: Any) -> list[str]:
    """Every SQL statement ``storage``'s engine runs from now on (and, on MySQL and MariaDB,
    its short-read engine: readiness is a short read)."""
    seen: list[str] = []
    for engine in {storage.engine, short_read_engine(storage.engine)}:
        event.listen(engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    return seen


def test_healthz_answers_ok_and_touches_no_database(newsletter_client: Any) -> None:
    seen = statements(newsletter_client.app.service.storage)
    for method in ("GET", "HEAD"):
        result = newsletter_client.simulate_request(method, "/healthz")
        assert result.status_code == 200
        assert result.headers["cache-control"] == "no-store"
        assert result.headers["content-type"].startswith("text/plain")
        assert result.text == ("ok\n" if method == "GET" else "")
    assert seen == []


def test_readyz_answers_ready_with_one_check_a_second(
    newsletter_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = statements(newsletter_client.app.service.storage)
    for _ in range(50):  # several load balancers probing at once
        result = newsletter_client.simulate_get("/readyz")
        assert result.status_code == 200
        assert result.text == "ready\n"
        assert result.headers["cache-control"] == "no-store"
    checks = len(seen)
    assert 1 <= checks <= 3  # one readiness check (the version table, maybe its existence)
    time.sleep(health.READY_CACHE_SECONDS + 0.05)
    head = newsletter_client.simulate_head("/readyz")
    assert (head.status_code, head.text) == (200, "")
    assert len(seen) == 2 * checks  # checked again once the cached answer expired


def test_readyz_needs_no_credentials_under_a_mount_prefix(newsletter_app: Any) -> None:
    from newsletter_connector.mounting import mount

    site = mount(PREFIX, newsletter_app, falcon.App())
    client = falcon.testing.TestClient(site)
    assert client.simulate_get(f"{PREFIX}/readyz").status_code == 200
    assert client.simulate_get(f"{PREFIX}/healthz").text == "ok\n"


def test_readyz_is_503_when_the_schema_is_not_current(
    newsletter_settings: Any, own_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "READY_CACHE_SECONDS", 0.0)
    client, service = client_on(newsletter_settings, own_database)
    assert client.simulate_get("/readyz").status_code == 200
    with service.storage.engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = 'older'"))
    result = client.simulate_get("/readyz")
    assert result.status_code == 503
    assert result.text == "not ready\n"  # no revision, no hint, no error text
    assert result.headers["cache-control"] == "no-store"
    assert client.simulate_get("/healthz").status_code == 200  # alive all the same
    service.close()


def test_readyz_is_503_when_the_sqlite_file_is_gone(
    newsletter_settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "READY_CACHE_SECONDS", 0.0)
    path = tmp_path / "gone.db"
    client, service = client_on(newsletter_settings, f"sqlite:///{path}", initialise=True)
    assert client.simulate_get("/readyz").status_code == 200
    service.close()
    path.unlink()
    result = client.simulate_get("/readyz")
    assert (result.status_code, result.text) == (503, "not ready\n")
    assert not path.exists()  # the check did not create an empty database


def test_readyz_is_503_within_the_connect_timeout_when_postgresql_is_down(
    newsletter_settings: Any,
) -> None:
    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody:secret@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    service = NewsletterService.build(settings, storage=storage)
    client = falcon.testing.TestClient(create_app(service=service))  # an outage is tolerated
    started = time.monotonic()
    result = client.simulate_get("/readyz")
    assert time.monotonic() - started < settings.db_connect_timeout
    assert (result.status_code, result.text) == (503, "not ready\n")
    assert "secret" not in result.text and "nobody" not in result.text
    assert client.simulate_get("/healthz").status_code == 200
    service.close()
