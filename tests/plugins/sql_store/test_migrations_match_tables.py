"""The migrations build exactly the schema ``tables.py`` declares (columns, types, indexes,
constraints), on SQLite and PostgreSQL: a table or index added to one and not the other fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import VERSION_TABLE
from newsletter_connector.plugins.sql_store.tables import metadata
from newsletter_connector.testing.databases import migrated_database


def test_the_migrated_schema_is_the_declared_one(tmp_path: Path) -> None:
    # A database of its own: the session's may hold a host example's tables too.
    with migrated_database(tmp_path) as url:
        engine = make_engine(url)
        try:
            with engine.connect() as connection:
                differences: list[Any] = compare_metadata(
                    MigrationContext.configure(connection), metadata
                )
        finally:
            engine.dispose()
    # Alembic's own version table is not declared in tables.py.
    rest = [d for d in differences if not (d[0] == "remove_table" and d[1].name == VERSION_TABLE)]
    assert rest == []
