"""Kept rollups of settled days

``nc_day_rollups`` keeps each settled UTC day's analytics rollup once it has been computed for
the admin pages, which then read it instead of computing it again. The export still computes
every rollup on demand.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 23:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import (
    TABLE_OPTIONS,
    Instant,
    Json,
)

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "nc_day_rollups",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("figures", Json, nullable=False),
        sa.Column("kept_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("day", name=op.f("pk_nc_day_rollups")),
        **TABLE_OPTIONS,
    )


def downgrade() -> None:
    op.drop_table("nc_day_rollups")
