"""Admin users, sessions and audit

``nc_admin_users`` holds the built-in admin login's users (argon2id hashes only);
``nc_admin_sessions`` its signed-in sessions by the SHA-256 of the cookie token;
``nc_admin_audit`` every admin act, appended in id order.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 19:41:06.575752
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import TABLE_OPTIONS, Instant

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "nc_admin_audit",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("at", Instant, nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=True),
        sa.Column("client_hash", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_admin_audit")),
        **TABLE_OPTIONS,
    )
    op.create_table(
        "nc_admin_sessions",
        sa.Column("token_digest", sa.String(length=64), nullable=False),
        sa.Column("username", sa.String(length=100), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", Instant, nullable=False),
        sa.Column("last_seen_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("token_digest", name=op.f("pk_nc_admin_sessions")),
        **TABLE_OPTIONS,
    )
    for column in ("created_at", "last_seen_at", "username"):
        op.create_index(f"ix_nc_admin_sessions_{column}", "nc_admin_sessions", [column])
    op.create_table(
        "nc_admin_users",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("username", sa.String(length=100), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("created_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_admin_users")),
        sa.UniqueConstraint("username", name=op.f("uq_nc_admin_users_username")),
        **TABLE_OPTIONS,
    )


def downgrade() -> None:
    op.drop_table("nc_admin_users")
    for column in ("username", "last_seen_at", "created_at"):
        op.drop_index(f"ix_nc_admin_sessions_{column}", table_name="nc_admin_sessions")
    op.drop_table("nc_admin_sessions")
    op.drop_table("nc_admin_audit")
