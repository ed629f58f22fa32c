"""The test fixtures' database reset (``empty_all_tables``): after it every table of the
package is empty and ids start at 1 again, on SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import create_engine, func, select, text

from newsletter_connector.plugins.sql_store.tables import metadata
from newsletter_connector.service.events import queue_event
from newsletter_connector.testing.databases import (
    database_name,
    empty_all_tables,
    normalise_url,
    postgres_server_url,
    temporary_postgres_database,
)
from tests.support import sync_payloads as p


def _store_some(service: Any) -> int:
    """Stores two subscribers and an event; the id of the second subscriber."""
    service.subscribers.subscribe({"email": "one@example.org"})
    second = service.subscribers.subscribe({"email": "two@example.org"}).record
    with service.storage.transaction() as uow:
        queue_event(uow, service.context, "contact.message", p.message())
    return int(second.id)


def test_every_table_is_emptied_and_ids_start_again(newsletter_service: Any) -> None:
    assert _store_some(newsletter_service) > 1
    engine = newsletter_service.storage.engine
    empty_all_tables(engine)
    with engine.connect() as connection:
        counts = {
            table.name: connection.execute(select(func.count()).select_from(table)).scalar()
            for table in metadata.sorted_tables
        }
    assert counts == dict.fromkeys(counts, 0)
    record = newsletter_service.subscribers.subscribe({"email": "again@example.org"}).record
    assert record.id == 1


def test_each_xdist_worker_names_its_own_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    first, second = database_name(), database_name()
    assert first.startswith("nc_test_gw1_") and second.startswith("nc_test_gw1_")
    assert first != second
    monkeypatch.setenv("PYTEST_XDIST_WORKER", 'gw2"; DROP')
    assert database_name().startswith("nc_test_gw2drop_")
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert database_name().startswith("nc_test_") and database_name().count("_") == 2


def test_a_test_database_commits_without_waiting_for_the_disk_and_a_benchmarks_waits(
    newsletter_service: Any,
) -> None:
    """The suite's database skips the wait for the disk (no test outlives a server crash); a
    database made as the benchmarks make theirs keeps the server's own setting, as production."""
    server = postgres_server_url()
    if server is None:
        pytest.skip("PostgreSQL only: synchronous_commit is a PostgreSQL setting")
    with newsletter_service.storage.engine.connect() as connection:
        assert connection.scalar(text("SHOW synchronous_commit")) == "off"
    settings = []
    with temporary_postgres_database(server) as url:
        for each in (server, url):
            engine = create_engine(normalise_url(each))
            try:
                with engine.connect() as connection:
                    settings.append(connection.scalar(text("SHOW synchronous_commit")))
            finally:
                engine.dispose()
    assert settings[1] == settings[0] != "off"
