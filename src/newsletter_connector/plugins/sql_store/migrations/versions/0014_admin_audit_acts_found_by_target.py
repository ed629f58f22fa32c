"""Admin audit acts found by target

``nc_admin_audit`` gets an index on ``target``: erasing an address rewrites the acts that name
it (an admin's unsubscribe or bounce of that address) to its keyed hash.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 02:54:05.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_nc_admin_audit_target", "nc_admin_audit", ["target"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_nc_admin_audit_target", table_name="nc_admin_audit")
