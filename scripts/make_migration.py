"""Generate an Alembic migration from the difference between the tables and the migrations.

Usage: python scripts/make_migration.py "what changed" [--rev-id 0002]
It migrates a scratch SQLite database to head, then autogenerates the next revision into
src/newsletter_connector/plugins/sql_store/migrations/versions/. Read the result before committing.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from alembic import command

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import alembic_config


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("message")
    parser.add_argument("--rev-id")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        engine = make_engine(f"sqlite:///{Path(scratch) / 'scratch.db'}")
        config = alembic_config(engine)
        command.upgrade(config, "head")
        command.revision(config, message=args.message, autogenerate=True, rev_id=args.rev_id)


if __name__ == "__main__":
    main()
