"""Indexes for subscriber changes per day

``nc_subscribers`` gets one index on each of ``created_at``, ``unsubscribed_at`` and
``bounced_at``: the admin dashboard counts signups, unsubscribes and bounces per day as grouped
reads of those ranges.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 19:45:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ("created_at", "unsubscribed_at", "bounced_at")


def upgrade() -> None:
    for column in _COLUMNS:
        op.create_index(f"ix_nc_subscribers_{column}", "nc_subscribers", [column], unique=False)


def downgrade() -> None:
    for column in reversed(_COLUMNS):
        op.drop_index(f"ix_nc_subscribers_{column}", table_name="nc_subscribers")
