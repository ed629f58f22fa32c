"""Re-announcements of pending signups are remembered; public forms get a shared rate counter.

``nc_subscribers.announced_at``: when a re-submit of a pending address last queued
``newsletter.signup`` again (NULL, as existing rows keep: only the signup, at ``created_at``).
``nc_rate_limit_counters``: one fixed-window counter per (form, client) key, the client
address only ever as a keyed hash.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 19:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import TABLE_OPTIONS, Instant

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("nc_subscribers") as batch:
        batch.add_column(sa.Column("announced_at", Instant, nullable=True))
    op.create_table(
        "nc_rate_limit_counters",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("expires_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_nc_rate_limit_counters"),
        **TABLE_OPTIONS,
    )
    op.create_index(
        "ix_nc_rate_limit_counters_expires_at", "nc_rate_limit_counters", ["expires_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_nc_rate_limit_counters_expires_at", table_name="nc_rate_limit_counters")
    op.drop_table("nc_rate_limit_counters")
    with op.batch_alter_table("nc_subscribers") as batch:
        batch.drop_column("announced_at")
