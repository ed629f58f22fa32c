"""Throw-away test databases: a SQLite file, or a fresh PostgreSQL, MySQL or MariaDB database
made and dropped on the server ``NEWSLETTER_TEST_DATABASE_URL`` names."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection, Engine, make_url

from ..plugins.sql_store.engine import DbTimeouts, is_mysql, make_engine, normalise_url
from ..plugins.sql_store.migrate import VERSION_TABLE, upgrade
from ..plugins.sql_store.tables import metadata

TEST_DATABASE_ENV = "NEWSLETTER_TEST_DATABASE_URL"


def server_url() -> str | None:
    """The database server ``NEWSLETTER_TEST_DATABASE_URL`` names (PostgreSQL, MySQL or
    MariaDB), or ``None`` when it is not set (the tests then run on SQLite files)."""
    url = os.environ.get(TEST_DATABASE_ENV, "").strip()
    if not url:
        return None
    backend = make_url(url).get_backend_name()
    if backend != "postgresql" and not is_mysql(backend):
        raise RuntimeError(
            f"{TEST_DATABASE_ENV} must be a postgresql://, mysql:// or mariadb:// URL, "
            "got a different kind"
        )
    return url


def postgres_server_url() -> str | None:
    """The PostgreSQL server named by ``NEWSLETTER_TEST_DATABASE_URL``, or ``None`` (not set,
    or another kind of server)."""
    url = server_url()
    return url if url and make_url(url).get_backend_name() == "postgresql" else None


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
def temporary_mysql_database(server_url: str) -> Iterator[str]:
    """Create a uniquely named database on the MySQL or MariaDB server ``server_url`` (UTF-8,
    compared by code point), yield its URL, then drop it."""
    name = database_name()
    admin = make_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(
                text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            )
        url = normalise_url(server_url).set(database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE IF EXISTS `{name}`"))
        admin.dispose()


@contextmanager
def temporary_database(server_url: str, *, wait_for_disk: bool = True) -> Iterator[str]:
    """A fresh, empty database on ``server_url``'s server (PostgreSQL, MySQL or MariaDB), its
    URL yielded, dropped afterwards (see :func:`temporary_postgres_database`)."""
    if is_mysql(make_url(server_url).get_backend_name()):
        with temporary_mysql_database(server_url) as url:
            yield url
    else:
        with temporary_postgres_database(server_url, wait_for_disk=wait_for_disk) as url:
            yield url


@contextmanager
def migrated_database(tmp_dir: Path) -> Iterator[str]:
    """A migrated database URL: on the server ``NEWSLETTER_TEST_DATABASE_URL`` names when it
    is set (on PostgreSQL, its commits not waiting for the disk), otherwise SQLite in
    ``tmp_dir``."""
    server = server_url()
    if server:
        with temporary_database(server, wait_for_disk=False) as url:
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
        elif is_mysql(engine.dialect.name):
            if not getattr(engine.dialect, "is_mariadb", False):  # MySQL caches the counters
                connection.execute(text("SET SESSION information_schema_stats_expiry = 0"))
            for table in connection.execute(_MOVED_AUTO_INCREMENTS, {"tables": tables}).scalars():
                # InnoDB starts the table's counter at 1 again when it is empty.
                connection.execute(text(f"ALTER TABLE {table} AUTO_INCREMENT = 1"))


def tables_with_rows(connection: Connection) -> list[str]:
    """The names of the package's tables that hold at least one row, asked in one statement."""
    probes = " UNION ALL ".join(
        f"SELECT '{table.name}' WHERE EXISTS (SELECT 1 FROM {table.name})"  # noqa: S608
        for table in metadata.sorted_tables
    )
    return list(connection.execute(text(probes)).scalars())


#: The tables of those named whose counter has moved (MySQL, MariaDB).
_MOVED_AUTO_INCREMENTS = text(
    "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"
    " AND TABLE_NAME IN :tables AND AUTO_INCREMENT > 1"
).bindparams(bindparam("tables", expanding=True))

#: Starts at 1 again every sequence owned by a column of the named tables (PostgreSQL).
_RESTART_OWNED_SEQUENCES = text(
    "SELECT setval(sequence.oid, 1, false) FROM pg_class sequence"
    " JOIN pg_depend owner ON owner.objid = sequence.oid"
    " AND owner.classid = 'pg_class'::regclass AND owner.refclassid = 'pg_class'::regclass"
    " JOIN pg_class owning ON owning.oid = owner.refobjid"
    " WHERE sequence.relkind = 'S' AND owning.relname = ANY(:tables)"
)
