"""Bulk jobs

``nc_bulk_jobs``: acts on every subscriber matching a filter (unsubscribe, mark bounced,
erase), worked through by the sync runner a chunk at a time under a lease, with the walk's
position and counts.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 23:55:00.000000
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

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    ident = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "nc_bulk_jobs",
        sa.Column("id", ident, autoincrement=True, nullable=False),
        sa.Column("act", sa.String(length=32), nullable=False),
        sa.Column("filter", Json, nullable=False),
        sa.Column("filter_text", sa.String(length=2000), nullable=False),
        sa.Column("requested_by", sa.String(length=200), nullable=False),
        sa.Column("requested_at", Instant, nullable=False),
        sa.Column("expected", sa.Integer(), nullable=False),
        sa.Column("expected_exact", sa.Boolean(), nullable=False),
        sa.Column("position_at", Instant, nullable=False),
        sa.Column("position_id", ident, nullable=False),
        sa.Column("changed", sa.Integer(), nullable=False),
        sa.Column("unchanged", sa.Integer(), nullable=False),
        sa.Column("missing", sa.Integer(), nullable=False),
        sa.Column("started_at", Instant, nullable=True),
        sa.Column("finished_at", Instant, nullable=True),
        sa.Column("stopped_by", sa.String(length=200), nullable=True),
        sa.Column("lease", sa.String(length=64), nullable=True),
        sa.Column("lease_until", Instant, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_bulk_jobs")),
        **TABLE_OPTIONS,
    )
    op.create_index(
        "ix_nc_bulk_jobs_unfinished", "nc_bulk_jobs", ["finished_at", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_nc_bulk_jobs_unfinished", table_name="nc_bulk_jobs")
    op.drop_table("nc_bulk_jobs")
