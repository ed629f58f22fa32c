"""API key last used day

``nc_api_keys`` gains ``last_used_on`` (a UTC day, NULL for keys not used since): the key lists
show when each key was last used.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 20:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("nc_api_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_used_on", sa.Date(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("nc_api_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_on")
