"""Alembic environment for the built-in SQL store (run through ``newsletter-connector db``)."""

from __future__ import annotations

from alembic import context

from newsletter_connector.plugins.sql_store.engine import make_engine, unbounded_statements
from newsletter_connector.plugins.sql_store.migrate import VERSION_TABLE
from newsletter_connector.plugins.sql_store.tables import metadata

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # plain `alembic` command line: take the URL from alembic.ini or the env
    import os

    engine = make_engine(
        config.get_main_option("sqlalchemy.url") or os.environ["NEWSLETTER_DATABASE_URL"]
    )

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction(), unbounded_statements(connection):
        context.run_migrations()
