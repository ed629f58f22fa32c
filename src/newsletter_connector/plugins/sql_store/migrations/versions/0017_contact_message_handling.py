"""Contact message handling

``nc_message_handling``: an admin's mark that a contact message was handled, by whom and when,
one row per message at most, kept beside the log (whose rows never change) and deleted with
its message.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 14:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import TABLE_OPTIONS, Instant

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "nc_message_handling",
        sa.Column(
            "message_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        ),
        sa.Column("handled_by", sa.String(length=200), nullable=False),
        sa.Column("handled_at", Instant, nullable=False),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["nc_contact_messages.id"],
            name=op.f("fk_nc_message_handling_message_id_nc_contact_messages"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("message_id", name=op.f("pk_nc_message_handling")),
        **TABLE_OPTIONS,
    )


def downgrade() -> None:
    op.drop_table("nc_message_handling")
