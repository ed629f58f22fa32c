"""Subscribers in signup order

``nc_subscribers (created_at, id)`` replaces the index on ``created_at`` alone: the admin's
subscriber list walks it newest first with ``id`` breaking ties, and the dashboard's changes
per day still read its ``created_at`` ranges.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 20:20:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_nc_subscribers_created_at_id", "nc_subscribers", ["created_at", "id"], unique=False
    )
    op.drop_index("ix_nc_subscribers_created_at", table_name="nc_subscribers")


def downgrade() -> None:
    op.create_index("ix_nc_subscribers_created_at", "nc_subscribers", ["created_at"], unique=False)
    op.drop_index("ix_nc_subscribers_created_at_id", table_name="nc_subscribers")
