"""Import jobs

``nc_import_jobs``: lists uploaded in the admin area, checked (a dry run) and imported by the
sync runner a chunk at a time under a lease, with the line reached, the counts and the first
refused lines; ``nc_import_file_parts``: each upload's file, in parts, until it is done with.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28 02:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import (
    TABLE_OPTIONS,
    Instant,
    Json,
    LongBinary,
)

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    ident = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "nc_import_jobs",
        sa.Column("id", ident, autoincrement=True, nullable=False),
        sa.Column("file_name", sa.String(length=200), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("options", Json, nullable=False),
        sa.Column("requested_by", sa.String(length=200), nullable=False),
        sa.Column("requested_at", Instant, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("counts", Json, nullable=False),
        sa.Column("refusals", Json, nullable=False),
        sa.Column("checked_counts", Json, nullable=False),
        sa.Column("started_by", sa.String(length=200), nullable=True),
        sa.Column("started_at", Instant, nullable=True),
        sa.Column("finished_at", Instant, nullable=True),
        sa.Column("stopped_by", sa.String(length=200), nullable=True),
        sa.Column("lease", sa.String(length=64), nullable=True),
        sa.Column("lease_until", Instant, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_import_jobs")),
        **TABLE_OPTIONS,
    )
    op.create_index("ix_nc_import_jobs_phase", "nc_import_jobs", ["phase", "id"], unique=False)
    op.create_table(
        "nc_import_file_parts",
        sa.Column("job_id", ident, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", LongBinary, nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["nc_import_jobs.id"],
            name=op.f("fk_nc_import_file_parts_job_id_nc_import_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("job_id", "seq", name=op.f("pk_nc_import_file_parts")),
        **TABLE_OPTIONS,
    )


def downgrade() -> None:
    op.drop_table("nc_import_file_parts")
    op.drop_index("ix_nc_import_jobs_phase", table_name="nc_import_jobs")
    op.drop_table("nc_import_jobs")
