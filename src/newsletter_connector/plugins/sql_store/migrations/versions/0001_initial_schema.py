"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-21 05:30:37.803195
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import (
    TABLE_OPTIONS,
    Double,
    Instant,
    Json,
    LongText,
)

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _id_column(name: str) -> sa.Column[int]:
    return sa.Column(
        name,
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        autoincrement=True,
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "nc_analytics_events",
        _id_column("id"),
        sa.Column("occurred_at", Instant, nullable=False),
        sa.Column("event_type", sa.String(length=32), nullable=False),
        sa.Column("visitor_id", sa.String(length=64), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("path", sa.String(length=2048), nullable=False),
        sa.Column("referrer", sa.String(length=2048), nullable=False),
        sa.Column("props", Json, nullable=True),
        sa.Column("engaged_seconds", Double, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_analytics_events")),
        **TABLE_OPTIONS,
    )
    op.create_index(
        op.f("ix_nc_analytics_events_occurred_at"), "nc_analytics_events", ["occurred_at"]
    )
    op.create_table(
        "nc_analytics_visitors",
        sa.Column("visitor_id", sa.String(length=64), nullable=False),
        sa.Column("first_seen_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("visitor_id", name=op.f("pk_nc_analytics_visitors")),
        **TABLE_OPTIONS,
    )
    op.create_index(
        op.f("ix_nc_analytics_visitors_first_seen_at"), "nc_analytics_visitors", ["first_seen_at"]
    )
    op.create_table(
        "nc_api_keys",
        _id_column("id"),
        sa.Column("label", sa.String(length=100), nullable=False),
        sa.Column("key_prefix", sa.String(length=16), nullable=False),
        sa.Column("key_digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", Instant, nullable=False),
        sa.Column("revoked_at", Instant, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_api_keys")),
        sa.UniqueConstraint("key_digest", name=op.f("uq_nc_api_keys_key_digest")),
        sa.UniqueConstraint("label", name=op.f("uq_nc_api_keys_label")),
        **TABLE_OPTIONS,
    )
    op.create_table(
        "nc_connections",
        _id_column("id"),
        sa.Column("platform_base", sa.String(length=2048), nullable=False),
        sa.Column("transport", sa.String(length=64), nullable=False),
        sa.Column("token", sa.String(length=512), nullable=False),
        sa.Column("created_at", Instant, nullable=False),
        sa.Column("disabled_at", Instant, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_connections")),
        **TABLE_OPTIONS,
    )
    op.create_index(op.f("ix_nc_connections_disabled_at"), "nc_connections", ["disabled_at"])
    op.create_table(
        "nc_contact_messages",
        _id_column("id"),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("message", LongText, nullable=False),
        sa.Column("submitted_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_contact_messages")),
        **TABLE_OPTIONS,
    )
    op.create_table(
        "nc_deletions",
        _id_column("id"),
        sa.Column("email_hmac", sa.String(length=64), nullable=False),
        sa.Column("previous_status", sa.String(length=16), nullable=False),
        sa.Column("deleted_at", Instant, nullable=False),
        sa.Column("discarded_events", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_deletions")),
        **TABLE_OPTIONS,
    )
    op.create_index(op.f("ix_nc_deletions_email_hmac"), "nc_deletions", ["email_hmac"])
    op.create_table(
        "nc_issues",
        _id_column("id"),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("cadence", sa.String(length=32), nullable=False),
        sa.Column("issue_date", sa.String(length=10), nullable=False),
        sa.Column("subject", sa.String(length=500), nullable=False),
        sa.Column("site_url", sa.String(length=2048), nullable=False),
        sa.Column("postal_address", LongText, nullable=True),
        sa.Column("sections", Json, nullable=False),
        sa.Column("html", LongText, nullable=False),
        sa.Column("text", LongText, nullable=True),
        sa.Column("period_key", sa.String(length=32), nullable=True),
        sa.Column("created_at", Instant, nullable=False),
        sa.Column("updated_at", Instant, nullable=False),
        sa.CheckConstraint(
            "kind IN ('daily', 'weekly', 'manual', 'test')", name=op.f("ck_nc_issues_kind")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_issues")),
        sa.UniqueConstraint("period_key", name=op.f("uq_nc_issues_period_key")),
        sa.UniqueConstraint("uuid", name=op.f("uq_nc_issues_uuid")),
        **TABLE_OPTIONS,
    )
    op.create_index(op.f("ix_nc_issues_created_at_id"), "nc_issues", ["created_at", "id"])
    op.create_table(
        "nc_job_runs",
        sa.Column("job_key", sa.String(length=100), nullable=False),
        sa.Column("ran_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("job_key", name=op.f("pk_nc_job_runs")),
        **TABLE_OPTIONS,
    )
    op.create_table(
        "nc_llm_usage",
        _id_column("id"),
        sa.Column("occurred_at", Instant, nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_llm_usage")),
        **TABLE_OPTIONS,
    )
    op.create_index(op.f("ix_nc_llm_usage_occurred_at"), "nc_llm_usage", ["occurred_at"])
    op.create_table(
        "nc_outbox_batches",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", Instant, nullable=False),
        sa.Column("lease_until", Instant, nullable=True),
        sa.Column("last_error", LongText, nullable=True),
        sa.Column("created_at", Instant, nullable=False),
        sa.Column("settled_at", Instant, nullable=True),
        sa.CheckConstraint(
            "state IN ('pending', 'sending', 'delivered', 'failed')",
            name=op.f("ck_nc_outbox_batches_state"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_outbox_batches")),
        **TABLE_OPTIONS,
    )
    op.create_index(
        op.f("ix_nc_outbox_batches_state_next_attempt_at"),
        "nc_outbox_batches",
        ["state", "next_attempt_at"],
    )
    op.create_table(
        "nc_settings",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("value", Json, nullable=False),
        sa.Column("updated_at", Instant, nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_nc_settings")),
        **TABLE_OPTIONS,
    )
    op.create_table(
        "nc_subscribers",
        _id_column("id"),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("first_name", sa.String(length=200), nullable=True),
        sa.Column("last_name", sa.String(length=200), nullable=True),
        sa.Column("zip", sa.String(length=5), nullable=True),
        sa.Column("phone", sa.String(length=32), nullable=True),
        sa.Column("sms_enabled", sa.Boolean(), nullable=False),
        sa.Column("pref_briefings", sa.String(length=8), nullable=False),
        sa.Column("pref_puzzles", sa.String(length=8), nullable=False),
        sa.Column("pref_on_this_day", sa.String(length=8), nullable=False),
        sa.Column("pref_local", sa.String(length=8), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("age_range", sa.String(length=16), nullable=True),
        sa.Column("gender", sa.String(length=16), nullable=True),
        sa.Column("gender_self", sa.String(length=200), nullable=True),
        sa.Column("categories", Json, nullable=False),
        sa.Column("consent_source", sa.String(length=200), nullable=True),
        sa.Column("consent_collected_at", Instant, nullable=True),
        sa.Column("created_at", Instant, nullable=False),
        sa.Column("updated_at", Instant, nullable=False),
        sa.Column("confirmed_at", Instant, nullable=True),
        sa.Column("unsubscribed_at", Instant, nullable=True),
        sa.Column("bounced_at", Instant, nullable=True),
        sa.Column("profile_completed_at", Instant, nullable=True),
        sa.Column("confirm_token", sa.String(length=64), nullable=False),
        sa.Column("unsubscribe_token", sa.String(length=64), nullable=False),
        sa.Column("profile_token", sa.String(length=64), nullable=False),
        sa.CheckConstraint(
            "pref_briefings IN ('off', 'daily', 'weekly')",
            name=op.f("ck_nc_subscribers_pref_briefings"),
        ),
        sa.CheckConstraint(
            "pref_local IN ('off', 'daily', 'weekly')", name=op.f("ck_nc_subscribers_pref_local")
        ),
        sa.CheckConstraint(
            "pref_on_this_day IN ('off', 'daily', 'weekly')",
            name=op.f("ck_nc_subscribers_pref_on_this_day"),
        ),
        sa.CheckConstraint(
            "pref_puzzles IN ('off', 'daily', 'weekly')",
            name=op.f("ck_nc_subscribers_pref_puzzles"),
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'confirmed', 'unsubscribed', 'bounced')",
            name=op.f("ck_nc_subscribers_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nc_subscribers")),
        sa.UniqueConstraint("confirm_token", name=op.f("uq_nc_subscribers_confirm_token")),
        sa.UniqueConstraint("email", name=op.f("uq_nc_subscribers_email")),
        sa.UniqueConstraint("profile_token", name=op.f("uq_nc_subscribers_profile_token")),
        sa.UniqueConstraint("unsubscribe_token", name=op.f("uq_nc_subscribers_unsubscribe_token")),
        **TABLE_OPTIONS,
    )
    op.create_index(op.f("ix_nc_subscribers_status_id"), "nc_subscribers", ["status", "id"])
    op.create_table(
        "nc_outbox_events",
        _id_column("seq"),
        sa.Column("event_id", sa.String(length=36), nullable=False),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("occurred_at", Instant, nullable=False),
        sa.Column("payload", Json, nullable=False),
        sa.Column("subscriber_key", sa.String(length=64), nullable=True),
        sa.Column("batch_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", Instant, nullable=False),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["nc_outbox_batches.id"],
            name=op.f("fk_nc_outbox_events_batch_id_nc_outbox_batches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_nc_outbox_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_nc_outbox_events_event_id")),
        **TABLE_OPTIONS,
    )
    op.create_index(
        op.f("ix_nc_outbox_events_batch_id_seq"), "nc_outbox_events", ["batch_id", "seq"]
    )
    op.create_index(
        op.f("ix_nc_outbox_events_subscriber_key"), "nc_outbox_events", ["subscriber_key"]
    )


def downgrade() -> None:
    for table in (
        "nc_outbox_events",
        "nc_subscribers",
        "nc_settings",
        "nc_outbox_batches",
        "nc_llm_usage",
        "nc_job_runs",
        "nc_issues",
        "nc_deletions",
        "nc_contact_messages",
        "nc_connections",
        "nc_api_keys",
        "nc_analytics_visitors",
        "nc_analytics_events",
    ):
        op.drop_table(table)
