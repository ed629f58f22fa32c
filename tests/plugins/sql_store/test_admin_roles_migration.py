"""Migration 0016: the admin users added before roles existed could use every page, and stay
owners; the database refuses any role but ``owner`` and ``editor``; and the migration goes
down and up again."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy.exc
from alembic import command
from sqlalchemy import text

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import alembic_config, upgrade
from tests.plugins.sql_store.test_rollup_day_migration import empty_database

pytestmark = pytest.mark.system  # migrates databases down and up

ADD_USER = text(
    "INSERT INTO nc_admin_users (username, password_hash, created_at) "
    "VALUES (:name, '$argon2id$x', '2026-03-01 12:00:00')"
)


def test_0016_makes_every_earlier_user_an_owner_and_takes_only_known_roles(
    tmp_path: Path,
) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        try:
            upgrade(engine, "0015")
            with engine.begin() as connection:
                connection.execute(ADD_USER, {"name": "ada"})
            upgrade(engine, "0016")
            with engine.begin() as connection:
                roles = connection.execute(text("SELECT username, role FROM nc_admin_users"))
                assert roles.all() == [("ada", "owner")]
                connection.execute(ADD_USER, {"name": "bob"})  # the default
            with pytest.raises(sqlalchemy.exc.IntegrityError), engine.begin() as connection:
                connection.execute(text("UPDATE nc_admin_users SET role = 'root'"))
            command.downgrade(alembic_config(engine), "0015")
            with engine.begin() as connection:
                names = connection.scalars(text("SELECT username FROM nc_admin_users"))
                assert sorted(names) == ["ada", "bob"]
            upgrade(engine)
        finally:
            engine.dispose()
