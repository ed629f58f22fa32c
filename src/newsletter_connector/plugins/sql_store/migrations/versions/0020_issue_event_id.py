"""The event queued with each issue

``nc_issues.event_id``: the id of the ``newsletter.issue`` event queued with the issue, so the
admin's Issues page can say whether it reached the platform. Issues recorded before have none.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 20:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("nc_issues", sa.Column("event_id", sa.String(length=36), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("nc_issues") as batch:
        batch.drop_column("event_id")
