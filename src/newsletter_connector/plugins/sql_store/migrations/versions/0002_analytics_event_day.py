"""Analytics events carry their UTC day, with covering indexes for the daily rollups; a
partial index of the unbatched outbox queue (``bench.rollups``, ``bench.sync``)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 06:07:32.204213
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import PATH_PREFIX

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Added nullable, filled from occurred_at (naive UTC), then made NOT NULL.
    with op.batch_alter_table("nc_analytics_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("day", sa.Date(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE nc_analytics_events SET day = CAST(occurred_at AS DATE)")
    else:  # SQLite stores DATE as 'YYYY-MM-DD', the start of its DATETIME text
        op.execute("UPDATE nc_analytics_events SET day = substr(occurred_at, 1, 10)")
    with op.batch_alter_table("nc_analytics_events", schema=None) as batch_op:
        batch_op.alter_column("day", existing_type=sa.Date(), nullable=False)
        batch_op.create_index(
            "ix_nc_analytics_events_day_session", ["day", "session_id"], unique=False
        )
        batch_op.create_index(
            "ix_nc_analytics_events_day_visitor", ["day", "visitor_id"], unique=False
        )
        batch_op.create_index(
            "ix_nc_analytics_events_type_day",
            ["event_type", "day", "path", "engaged_seconds"],
            unique=False,
            **PATH_PREFIX,
        )

    with op.batch_alter_table("nc_outbox_events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_nc_outbox_events_unbatched",
            ["seq"],
            unique=False,
            postgresql_where=sa.text("batch_id IS NULL"),
            sqlite_where=sa.text("batch_id IS NULL"),
        )


def downgrade() -> None:
    with op.batch_alter_table("nc_outbox_events", schema=None) as batch_op:
        batch_op.drop_index("ix_nc_outbox_events_unbatched")

    with op.batch_alter_table("nc_analytics_events", schema=None) as batch_op:
        batch_op.drop_index("ix_nc_analytics_events_type_day")
        batch_op.drop_index("ix_nc_analytics_events_day_visitor")
        batch_op.drop_index("ix_nc_analytics_events_day_session")
        batch_op.drop_column("day")
