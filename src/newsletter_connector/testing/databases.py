"""Throw-away test databases: a SQLite file, or a fresh PostgreSQL database made and dropped."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine, make_url

from ..plugins.sql_store.engine import DbTimeouts, make_engine, normalise_url
from ..plugins.sql_store.migrate import VERSION_TABLE, upgrade
from ..plugins.sql_store.tables import metadata

TEST_DATABASE_ENV = "NEWSLETTER_TEST_DATABASE_URL"


def postgres_server_url() -> str | None:
    """The PostgreSQL server named by ``NEWSLETTER_TEST_DATABASE_URL``, or ``None``."""
    url = os.environ.get(TEST_DATABASE_ENV, "").strip()
    if not url:
        return None
    if make_url(url).get_backend_name() != "postgresql":
        raise RuntimeError(f"{TEST_DATABASE_ENV} must be a postgresql:// URL, got a different kind")
    return url


def database_name() -> str:
    """A fresh database name, ``nc_test_`` and random hex. Under pytest-xdist it names the
    worker too (``nc_test_gw1_...``): each worker makes its own database, told apart on the
    server by the name."""
    worker = "".join(ch for ch in os.environ.get("PYTEST_XDIST_WORKER", "").lower() if ch.isalnum())
    return f"nc_test_{worker[:8] + '_' if worker else ''}{secrets.token_hex(6)}"


@contextmanager
def temporary_postgres_database(
    server_url: str, *, options: str = "", wait_for_disk: bool = True
) -> Iterator[str]:
    """Create a uniquely named database on ``server_url``, yield its URL, then drop it.
    ``options`` are added to ``CREATE DATABASE`` (e.g. ``TEMPLATE template0 LOCALE_PROVIDER
    icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`` for a linguistic collation). With
    ``wait_for_disk=False`` a commit returns before the disk has it (``synchronous_commit``
    off): only a crash of the server itself could lose it, which a test database never
    outlives; a benchmark keeps the default, as production does."""
    name = database_name()
    # Creating and dropping a database may take long on a busy server: give it minutes.
    patient = DbTimeouts(statement=600.0, lock=600.0, reply=660.0)
    admin = make_engine(server_url, isolation_level="AUTOCOMMIT", timeouts=patient)
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}" {options}'))
            if not wait_for_disk:
                connection.execute(text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))
        url = normalise_url(server_url).set(database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def migrated_database(tmp_dir: Path) -> Iterator[str]:
    """A migrated database URL: PostgreSQL when configured (its commits not waiting for the
    disk), otherwise SQLite in ``tmp_dir``."""
    server = postgres_server_url()
    if server:
        with temporary_postgres_database(server, wait_for_disk=False) as url:
            _migrate(url)
            yield url
    else:
        url = f"sqlite:///{tmp_dir / 'newsletter-test.db'}"
        _migrate(url)
        yield url


def _migrate(url: str) -> None:
    engine = make_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()


def empty_all_tables(engine: Engine) -> None:
    """Delete every row of every table of the package (the schema and its version stay) and
    start their ids at 1 again. Tables that refer to the package's must be emptied first."""
    tables = [t.name for t in reversed(metadata.sorted_tables)]
    assert VERSION_TABLE not in tables
    with engine.begin() as connection:
        # DELETE, not TRUNCATE: on PostgreSQL a TRUNCATE of every table costs ten times as
        # much as deleting the few rows a test leaves (it replaces each table's files). Only
        # the tables holding rows, found in one statement: a test leaves rows in a few.
        filled = set(tables_with_rows(connection))
        for table in tables:
            if table in filled:
                connection.execute(text(f"DELETE FROM {table}"))  # noqa: S608 - our table names
        if engine.dialect.name == "postgresql":
            # Every table's: a rolled-back insert moves a sequence and leaves no row.
            connection.execute(_RESTART_OWNED_SEQUENCES, {"tables": tables})


def tables_with_rows(connection: Connection) -> list[str]:
    """The names of the package's tables that hold at least one row, asked in one statement."""
    probes = " UNION ALL ".join(
        f"SELECT '{table.name}' WHERE EXISTS (SELECT 1 FROM {table.name})"  # noqa: S608
        for table in metadata.sorted_tables
    )
    return list(connection.execute(text(probes)).scalars())


#: Starts at 1 again every sequence owned by a column of the named tables (PostgreSQL).
_RESTART_OWNED_SEQUENCES = text(
    "SELECT setval(sequence.oid, 1, false) FROM pg_class sequence"
    " JOIN pg_depend owner ON owner.objid = sequence.oid"
    " AND owner.classid = 'pg_class'::regclass AND owner.refclassid = 'pg_class'::regclass"
    " JOIN pg_class owning ON owning.oid = owner.refobjid"
    " WHERE sequence.relkind = 'S' AND owning.relname = ANY(:tables)"
)
