"""``SqlStorage.check_ready`` on SQLite: a missing database file is reported (connecting would
create an empty one), an in-memory database is no file and is checked like any other."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.pool import StaticPool

from newsletter_connector.errors import NotMigrated
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://"])
def test_a_migrated_in_memory_database_is_ready(url: str) -> None:
    storage = SqlStorage(make_engine(url, poolclass=StaticPool))  # one connection: one database
    try:
        storage.migrate()
        storage.check_ready()
        with storage.transaction(write=False) as uow:
            assert uow.keys.list() == []
    finally:
        storage.close()


def test_an_unmigrated_in_memory_database_says_it_has_no_schema() -> None:
    storage = SqlStorage(make_engine("sqlite:///:memory:", poolclass=StaticPool))
    try:
        with pytest.raises(NotMigrated, match="has no newsletter-connector schema"):
            storage.check_ready()
    finally:
        storage.close()


def test_a_missing_database_file_is_reported_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    storage = SqlStorage(make_engine(f"sqlite:///{path}"))
    try:
        with pytest.raises(NotMigrated, match="does not exist; create it with"):
            storage.check_ready()
    finally:
        storage.close()
    assert not path.exists()


def test_an_in_memory_database_needs_the_one_connection_pool() -> None:
    # Each connection of any other pool would open a database of its own.
    with pytest.raises(ValueError, match="poolclass=StaticPool"):
        make_engine("sqlite:///:memory:")
