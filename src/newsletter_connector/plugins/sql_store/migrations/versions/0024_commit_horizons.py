"""Commit horizons as rows, for MySQL and MariaDB

``nc_commit_horizons`` holds one row per commit horizon: on MySQL and MariaDB, which have no
shared advisory lock, every insert behind a horizon locks its row shared and reading the
horizon locks it exclusively. Unused (and empty) on SQLite and PostgreSQL. Creating it is
safe to run again after a failure half way: a table already there is left as it is.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29 10:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import TABLE_OPTIONS

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "nc_commit_horizons",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_nc_commit_horizons")),
        if_not_exists=True,
        **TABLE_OPTIONS,
    )


def downgrade() -> None:
    op.drop_table("nc_commit_horizons", if_exists=True)
