"""Admin audit detail

``nc_admin_audit.detail``: what an act recorded besides its target, such as where a reader
agreed to text messages when an admin turned them on. An erasure clears it with the target.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 17:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("nc_admin_audit", sa.Column("detail", sa.String(length=500), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("nc_admin_audit") as batch:
        batch.drop_column("detail")
