"""Erasure covers contact messages: they are found by sender address, and the deletion record
notes what was erased

``nc_contact_messages.email`` gets an index; ``nc_deletions`` gains ``erased_messages`` (0 for
older rows) and a nullable ``previous_status`` (NULL: the address had no subscriber).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 18:50:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_nc_contact_messages_email", "nc_contact_messages", ["email"], unique=False)
    with op.batch_alter_table("nc_deletions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("erased_messages", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.alter_column("previous_status", existing_type=sa.String(16), nullable=True)
    # The metadata has no server default (the store always writes the column).
    with op.batch_alter_table("nc_deletions", schema=None) as batch_op:
        batch_op.alter_column("erased_messages", existing_type=sa.Integer(), server_default=None)


def downgrade() -> None:
    # The old shape needs a previous status: an erasure of an address that had no subscriber
    # keeps its evidence row with previous_status 'none' (the column has no CHECK).
    op.execute("UPDATE nc_deletions SET previous_status = 'none' WHERE previous_status IS NULL")
    with op.batch_alter_table("nc_deletions", schema=None) as batch_op:
        batch_op.alter_column("previous_status", existing_type=sa.String(16), nullable=False)
        batch_op.drop_column("erased_messages")
    op.drop_index("ix_nc_contact_messages_email", table_name="nc_contact_messages")
