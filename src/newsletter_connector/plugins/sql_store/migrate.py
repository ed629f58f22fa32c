"""Alembic wiring: the migrations ship inside the package and run against a given engine."""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

# Alembic's INFO lines ("setup plugin ..." at import, "Context impl ...", "Running upgrade ...")
# are noise on every command that configures logging; its warnings and errors still show, and
# ``db upgrade`` says what it did. Set before the import, which logs.
logging.getLogger("alembic").setLevel(logging.WARNING)

from alembic import command  # noqa: E402
from alembic.config import Config  # noqa: E402
from alembic.runtime.migration import MigrationContext  # noqa: E402
from alembic.script import ScriptDirectory  # noqa: E402
from sqlalchemy.engine import Engine  # noqa: E402

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
VERSION_TABLE = "nc_alembic_version"


def alembic_config(engine: Engine) -> Config:
    """An Alembic config bound to ``engine`` (passed to ``env.py`` as ``connection``)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


@cache
def head_revision() -> str:
    """The newest migration this package ships (read once: parsing every migration script
    costs tens of milliseconds, and the scripts do not change while the process runs)."""
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    head = script.get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or ``None`` for a database never migrated."""
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database up to ``revision``."""
    command.upgrade(alembic_config(engine), revision)
