"""Outbox batches record the seq of their first event, so batches frozen together in one claim
still go out oldest first when retried or returned from an expired lease

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 07:45:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("nc_outbox_batches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("first_seq", sa.BigInteger(), nullable=True))
    # Batches stored before: their first member's seq (NULL for one emptied by erasure).
    op.execute(
        "UPDATE nc_outbox_batches SET first_seq = (SELECT MIN(e.seq) FROM nc_outbox_events e "
        "WHERE e.batch_id = nc_outbox_batches.id)"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # Not batch mode: it rebuilds the table, and dropping the old one deletes every event
        # whose batch_id references it (ON DELETE CASCADE with foreign keys on). SQLite drops
        # a column in place since 3.35, which the store needs anyway (RETURNING).
        op.execute("ALTER TABLE nc_outbox_batches DROP COLUMN first_seq")
        return
    op.drop_column("nc_outbox_batches", "first_seq")
