"""Prefix search finds exactly the addresses starting with the prefix, in code-point order and
across keyset pages, even on a PostgreSQL database whose own collation is linguistic (ICU
``en-US``): ``nc_subscribers.email`` (migration 0012) and the example host's
``host_users.email`` compare by code point, and their unique index serves the range, the order
and the lookup by address."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from examples.wsgi_mount.host_store import HOST_SUBSCRIBERS
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import alembic_config, upgrade
from newsletter_connector.testing.databases import postgres_server_url, temporary_postgres_database
from newsletter_connector.testing.subscriber_samples import make_subscriber_data

ICU_EN_US = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
# en-US weighs punctuation in its own order ('_' < '-' < '.'), letters before case and accents
# ('a' < 'A' < 'ä' < 'ab'): by code point '-' < '.' < 'A' < '_' < 'a' < 'ä'.
ADDRESSES = [
    "a.b@x.org",
    "ab@x.org",
    "a-c@x.org",
    "A@x.org",
    "aB@x.org",
    "a_b@x.org",
    "a@x.org",
    "\u00e4@x.org",
    "\u00e4b@x.org",
    "b@x.org",
    "e@x.org",
    "\u00e9@x.org",
    "Z@x.org",
]
PREFIXES = ["", "a", "a.", "a-", "a_", "A", "ab", "aB", "\u00e4", "e", "z"]
PAGE = 2
BEFORE = "0011"  # the last revision with the database's own collation
AFTER = "0012"  # the revision that declares the email column COLLATE "C"


@pytest.fixture
def linguistic_url() -> Iterator[str]:
    server = postgres_server_url()
    if not server:
        pytest.skip("PostgreSQL only: SQLite's default collation, BINARY, compares by code point")
    with temporary_postgres_database(server, options=ICU_EN_US) as url:
        engine = make_engine(url)
        assert database_order(engine) != sorted(ADDRESSES)  # the premise
        engine.dispose()
        yield url


def database_order(engine: Engine) -> list[str]:
    """``ADDRESSES`` in the order of the database's own collation."""
    with engine.connect() as connection:
        query = text("SELECT a FROM unnest(CAST(:all AS text[])) a ORDER BY a")
        return list(connection.scalars(query, {"all": ADDRESSES}))


def expected(prefix: str) -> list[str]:
    return [address for address in sorted(ADDRESSES) if address.startswith(prefix)]


def add_all(storage: Any) -> None:
    with storage.transaction() as uow:
        for address in ADDRESSES:
            assert uow.subscribers.add(make_subscriber_data(address)) is not None


def found(storage: Any, prefix: str) -> list[str]:
    """Every address ``find_by_prefix`` finds, walking keyset pages of ``PAGE``."""
    emails: list[str] = []
    after: str | None = None
    while True:
        with storage.transaction(write=False) as uow:
            page = uow.subscribers.find_by_prefix(prefix, after_email=after, limit=PAGE)
        emails += [record.email for record in page]
        if len(page) < PAGE:
            return emails
        after = page[-1].email


def storage_on(url: str, store: str) -> Any:
    engine = make_engine(url)
    if store == "host":
        host = SqlStorage(engine, HOST_SUBSCRIBERS)
        host.migrate()  # the package's migrations and the host's own tables
        return host
    upgrade(engine)
    return SqlStorage(engine)


@pytest.mark.parametrize("store", ["builtin", "host"])
def test_prefix_search_is_code_point_ordered_on_a_linguistic_database(
    linguistic_url: str, store: str
) -> None:
    storage = storage_on(linguistic_url, store)
    try:
        add_all(storage)
        for prefix in PREFIXES:
            assert found(storage, prefix) == expected(prefix), prefix
        with storage.transaction() as uow:  # equal means the same code points, as before
            assert uow.subscribers.add(make_subscriber_data("ab@x.org")) is None
            assert uow.subscribers.get_by_email("AB@x.org") is None
            assert uow.subscribers.get_by_email("aB@x.org") is not None
    finally:
        storage.close()


def plans(engine: Engine, run: Any) -> list[str]:
    """The plans of the statements ``run()`` executes, with sequential scans and sorts priced
    out: a plan still showing one has no index to use instead."""
    statements: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        run()
    finally:
        event.remove(engine, "before_cursor_execute", record)
    found_plans = []
    with engine.connect() as connection:
        connection.exec_driver_sql("SET enable_seqscan = off")
        connection.exec_driver_sql("SET enable_sort = off")
        for statement, parameters in statements:
            if "nc_subscribers" in statement or "host_users" in statement:
                rows = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters).all()
                found_plans.append("\n".join(row[0] for row in rows))
    return found_plans


@pytest.mark.parametrize(
    ("store", "index"), [("builtin", "uq_nc_subscribers_email"), ("host", "host_users_email_key")]
)
def test_prefix_search_and_lookup_read_the_unique_email_index(
    linguistic_url: str, store: str, index: str
) -> None:
    storage = storage_on(linguistic_url, store)
    try:
        add_all(storage)

        def run() -> None:
            with storage.transaction(write=False) as uow:
                uow.subscribers.find_by_prefix("a", after_email="a-c@x.org", limit=PAGE)
                uow.subscribers.get_by_email("ab@x.org")

        got = plans(storage.engine, run)
        assert len(got) == 2
        for plan in got:
            assert f"Index Scan using {index}" in plan, plan
            assert "Seq Scan" not in plan and "Sort" not in plan, plan
    finally:
        storage.close()


def email_collation(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return connection.scalar(
            text(
                "SELECT collation_name FROM information_schema.columns "
                "WHERE table_name = 'nc_subscribers' AND column_name = 'email'"
            )
        )


def test_0012_declares_the_email_code_point_ordered_and_downgrades(linguistic_url: str) -> None:
    engine = make_engine(linguistic_url)
    upgrade(engine, BEFORE)
    storage = SqlStorage(engine)
    try:
        add_all(storage)
        assert email_collation(engine) is None  # the database's own
        assert found(storage, "a") != expected("a")  # what 0012 repairs
        upgrade(engine)
        assert email_collation(engine) == "C"
        assert all(found(storage, prefix) == expected(prefix) for prefix in PREFIXES)
        command.downgrade(alembic_config(engine), BEFORE)
        assert email_collation(engine) is None
        assert found(storage, "") == database_order(engine)
        upgrade(engine)
        assert email_collation(engine) == "C"
        assert found(storage, "") == sorted(ADDRESSES)
    finally:
        storage.close()


def test_0012_leaves_sqlite_as_it_is(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'collation.db'}")
    upgrade(engine, BEFORE)
    before = sqlite_schema(engine)
    upgrade(engine, AFTER)
    storage = SqlStorage(engine)
    try:
        assert sqlite_schema(engine) == before
        add_all(storage)
        assert all(found(storage, prefix) == expected(prefix) for prefix in PREFIXES)
        command.downgrade(alembic_config(engine), BEFORE)
        assert sqlite_schema(engine) == before
        upgrade(engine, AFTER)
        assert all(found(storage, prefix) == expected(prefix) for prefix in PREFIXES)
    finally:
        storage.close()


def sqlite_schema(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        query = text("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")
        return list(connection.scalars(query))
