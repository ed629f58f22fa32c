"""Admin user roles

``nc_admin_users`` gains ``role``: ``owner`` (everything) or ``editor`` (the newsletter's
pages, not the settings or the audit log). Every user added before was an owner in all but
name, and stays one.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 14:20:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("nc_admin_users", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("role", sa.String(length=16), server_default="owner", nullable=False)
        )
        batch_op.create_check_constraint(
            op.f("ck_nc_admin_users_role"), "role IN ('owner', 'editor')"
        )


def downgrade() -> None:
    with op.batch_alter_table("nc_admin_users", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_nc_admin_users_role"), type_="check")
        batch_op.drop_column("role")
