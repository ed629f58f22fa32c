"""Platform feedback and suppressions

``nc_platform_feedback`` keeps every feedback item the platform posted (by its id, so a retry
applies nothing twice); ``nc_suppressions`` keeps addresses the platform reported while no
subscriber had them, by keyed hash only.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 19:12:54.752657
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import (
    TABLE_OPTIONS,
    Instant,
    LongText,
)

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KINDS = "kind IN ('bounce', 'complaint', 'unsubscribe')"


def upgrade() -> None:
    op.create_table(
        "nc_platform_feedback",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("email_hmac", sa.String(length=64), nullable=True),
        sa.Column("reason", LongText, nullable=True),
        sa.Column("occurred_at", Instant, nullable=False),
        sa.Column("received_at", Instant, nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.CheckConstraint(_KINDS, name=op.f("ck_nc_platform_feedback_kind")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_platform_feedback")),
        **TABLE_OPTIONS,
    )
    op.create_index(
        "ix_nc_platform_feedback_email_hmac", "nc_platform_feedback", ["email_hmac"], unique=False
    )
    op.create_table(
        "nc_suppressions",
        sa.Column("email_hmac", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("occurred_at", Instant, nullable=False),
        sa.Column("recorded_at", Instant, nullable=False),
        sa.CheckConstraint(_KINDS, name=op.f("ck_nc_suppressions_kind")),
        sa.PrimaryKeyConstraint("email_hmac", name=op.f("pk_nc_suppressions")),
        **TABLE_OPTIONS,
    )


def downgrade() -> None:
    op.drop_table("nc_suppressions")
    op.drop_index("ix_nc_platform_feedback_email_hmac", table_name="nc_platform_feedback")
    op.drop_table("nc_platform_feedback")
