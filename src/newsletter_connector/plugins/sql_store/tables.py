"""The built-in SQL store's tables (SQLAlchemy Core), for SQLite, PostgreSQL, MySQL and MariaDB.

Times are stored as naive UTC ``DateTime`` on every dialect (``DATETIME(6)`` on MySQL and
MariaDB: :mod:`.column_types`), so comparisons and day bucketing behave the same everywhere.
Every column that a query filters or orders by has an index. The Alembic migrations under
``migrations/`` are the source of truth for a database's shape; this metadata is what they
were generated from and what queries are written against.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
)

from ...descriptors import ADMIN_ROLES, OWNER
from .column_types import MYSQL_DIALECTS, TABLE_OPTIONS, Double, Instant, Json, LongBinary, LongText

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# SQLite only aliases ROWID (and so autoincrements) for a column declared exactly INTEGER.
Id = BigInteger().with_variant(Integer(), "sqlite")

#: An index's share of a page path on MySQL and MariaDB (4 bytes a letter, 3,072 a key).
PATH_PREFIX: dict[str, Any] = {f"{dialect}_length": {"path": 640} for dialect in MYSQL_DIALECTS}

CADENCES = ("off", "daily", "weekly")
STATUSES = ("pending", "confirmed", "unsubscribed", "bounced")
FEEDBACK_KINDS = ("bounce", "complaint", "unsubscribe")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


subscribers = Table(
    "nc_subscribers",
    metadata,
    # Creation order (one sequence): keyset walks go by id.
    Column("id", Id, primary_key=True, autoincrement=True),
    # Compared by code point on every dialect (SQLite's BINARY default; COLLATE "C" on
    # PostgreSQL, whatever the database's collation): prefix search reads a range of its index.
    Column(
        "email",
        String(320).with_variant(String(320, collation="C"), "postgresql"),
        nullable=False,
        unique=True,
    ),
    Column("first_name", String(200)),
    Column("last_name", String(200)),
    Column("zip", String(5)),
    Column("phone", String(32)),
    Column("sms_enabled", Boolean, nullable=False, default=False),
    Column("pref_briefings", String(8), nullable=False),
    Column("pref_puzzles", String(8), nullable=False),
    Column("pref_on_this_day", String(8), nullable=False),
    Column("pref_local", String(8), nullable=False),
    Column("status", String(16), nullable=False),
    Column("age_range", String(16)),
    Column("gender", String(16)),
    Column("gender_self", String(200)),
    Column("categories", Json, nullable=False),
    Column("consent_source", String(200)),
    Column("consent_collected_at", Instant),
    Column("created_at", Instant, nullable=False),
    Column("updated_at", Instant, nullable=False),
    Column("confirmed_at", Instant),
    Column("unsubscribed_at", Instant),
    Column("bounced_at", Instant),
    Column("profile_completed_at", Instant),
    # When a re-submit of a pending address last queued ``newsletter.signup`` again (NULL: only
    # the signup, at ``created_at``). Not part of the contact.
    Column("announced_at", Instant),
    # Link tokens (>= 128 bits, URL-safe). Kept readable because every contact record carries
    # its links; looked up through their unique indexes.
    Column("confirm_token", String(64), nullable=False, unique=True),
    Column("unsubscribe_token", String(64), nullable=False, unique=True),
    Column("profile_token", String(64), nullable=False, unique=True),
    CheckConstraint(_in("status", STATUSES), name="status"),
    CheckConstraint(_in("pref_briefings", CADENCES), name="pref_briefings"),
    CheckConstraint(_in("pref_puzzles", CADENCES), name="pref_puzzles"),
    CheckConstraint(_in("pref_on_this_day", CADENCES), name="pref_on_this_day"),
    CheckConstraint(_in("pref_local", CADENCES), name="pref_local"),
    Index(None, "status", "id"),
    # Changes per day (the admin dashboard) read each stamp's range; the admin's list walks
    # (created_at, id) newest first.
    Index(None, "created_at", "id"),
    Index(None, "unsubscribed_at"),
    Index(None, "bounced_at"),
    **TABLE_OPTIONS,
)

deletions = Table(
    "nc_deletions",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    # HMAC-SHA256 of the lowercased address keyed with the site secret: evidence without the
    # plaintext address.
    Column("email_hmac", String(64), nullable=False, index=True),
    # NULL when the address had no subscriber (only messages or events were erased).
    Column("previous_status", String(16)),
    Column("deleted_at", Instant, nullable=False),
    # Undelivered outbox events discarded, and contact messages sent from the address erased.
    Column("discarded_events", Integer, nullable=False, default=0),
    Column("erased_messages", Integer, nullable=False, default=0),
    **TABLE_OPTIONS,
)

issues = Table(
    "nc_issues",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),
    Column("cadence", String(32), nullable=False),
    Column("issue_date", String(10), nullable=False),
    Column("subject", String(500), nullable=False),
    Column("site_url", String(2048), nullable=False),
    Column("postal_address", LongText),
    Column("sections", Json, nullable=False),
    Column("html", LongText, nullable=False),
    Column("text", LongText),
    # "daily:2026-11-21" / "weekly:2026-W47" for scheduled kinds, NULL otherwise: the unique
    # index is what makes a scheduled run happen once per period, even with several runners.
    Column("period_key", String(32), unique=True),
    Column("created_at", Instant, nullable=False),
    Column("updated_at", Instant, nullable=False),
    # The newsletter.issue event queued with the issue (NULL: none, or recorded before).
    Column("event_id", String(36)),
    CheckConstraint(_in("kind", ("daily", "weekly", "manual", "test")), name="kind"),
    Index(None, "created_at", "id"),
    **TABLE_OPTIONS,
)

contact_messages = Table(
    "nc_contact_messages",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    # Indexed for erasure, which deletes every message sent from an address.
    Column("email", String(320), nullable=False, index=True),
    Column("name", String(200)),
    Column("message", LongText, nullable=False),
    Column("submitted_at", Instant, nullable=False),
    **TABLE_OPTIONS,
)

# An admin's mark that a message was handled; the message row itself never changes. Erasing
# the sender's messages takes their marks with them.
message_handling = Table(
    "nc_message_handling",
    metadata,
    Column(
        "message_id",
        Id,
        ForeignKey("nc_contact_messages.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("handled_by", String(200), nullable=False),
    Column("handled_at", Instant, nullable=False),
    **TABLE_OPTIONS,
)

analytics_events = Table(
    "nc_analytics_events",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("occurred_at", Instant, nullable=False, index=True),
    Column("event_type", String(32), nullable=False),
    Column("visitor_id", String(64), nullable=False),
    Column("session_id", String(64), nullable=False),
    Column("path", String(2048), nullable=False),
    Column("referrer", String(2048), nullable=False),
    Column("props", Json),
    # Seconds of an engagement ping, in its own column so averages stay in SQL.
    Column("engaged_seconds", Double),
    # The UTC day of occurred_at: rollups read it straight off the covering indexes below.
    Column("day", Date, nullable=False),
    # Rollups: per-type counts/averages and each day's top pages (paths are percent-encoded
    # ASCII of at most 1,024 characters, well inside PostgreSQL's btree entry limit) ...
    Index(
        "ix_nc_analytics_events_type_day",
        "event_type",
        "day",
        "path",
        "engaged_seconds",
        # MySQL and MariaDB index at most 3,072 bytes of a key: the path's first 640 letters.
        **PATH_PREFIX,
    ),
    # ... and each day's distinct visitors and sessions.
    Index("ix_nc_analytics_events_day_visitor", "day", "visitor_id"),
    Index("ix_nc_analytics_events_day_session", "day", "session_id"),
    **TABLE_OPTIONS,
)

analytics_visitors = Table(
    "nc_analytics_visitors",
    metadata,
    Column("visitor_id", String(64), primary_key=True),
    Column("first_seen_at", Instant, nullable=False, index=True),
    **TABLE_OPTIONS,
)

llm_usage = Table(
    "nc_llm_usage",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("occurred_at", Instant, nullable=False, index=True),
    Column("model", String(200), nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("prompt_tokens", Integer, nullable=False, default=0),
    Column("completion_tokens", Integer, nullable=False, default=0),
    **TABLE_OPTIONS,
)

api_keys = Table(
    "nc_api_keys",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("label", String(100), nullable=False, unique=True),
    # The first characters of the key, to recognise it in a list; never enough to use it.
    Column("key_prefix", String(16), nullable=False),
    Column("key_digest", String(64), nullable=False, unique=True),
    Column("created_at", Instant, nullable=False),
    Column("revoked_at", Instant),
    # Day-granular, so a busy key costs one write a day per process, not one per request.
    Column("last_used_on", Date),
    **TABLE_OPTIONS,
)

kv_settings = Table(
    "nc_settings",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("value", Json, nullable=False),
    Column("updated_at", Instant, nullable=False),
    **TABLE_OPTIONS,
)

connections = Table(
    "nc_connections",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("platform_base", String(2048), nullable=False),
    Column("transport", String(64), nullable=False),
    # Sent as the bearer token on every push, so it is kept readable; compared as a digest.
    Column("token", String(512), nullable=False),
    Column("created_at", Instant, nullable=False),
    Column("disabled_at", Instant, index=True),
    **TABLE_OPTIONS,
)

outbox_batches = Table(
    "nc_outbox_batches",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Instant, nullable=False),
    Column("lease_until", Instant),
    Column("last_error", LongText),
    Column("created_at", Instant, nullable=False),
    Column("settled_at", Instant),
    # The seq of the batch's first event: batches frozen in one claim share created_at, and
    # retries and returned leases must still go out oldest first (migration 0003).
    Column("first_seq", BigInteger),
    # A batch owns the events with seq in [first_seq, last_seq]; events above the newest
    # last_seq are queued. NULL (both) for a batch emptied by erasure before migration 0004.
    Column("last_seq", BigInteger),
    CheckConstraint(_in("state", ("pending", "sending", "delivered", "failed")), name="state"),
    Index(None, "state", "next_attempt_at"),
    # The freeze frontier (max) and "which batch holds this seq" (the first last_seq >= seq).
    Index(None, "last_seq"),
    **TABLE_OPTIONS,
)

outbox_events = Table(
    "nc_outbox_events",
    metadata,
    # Queue order: the runner sends the oldest first. Never reused (SQLite: AUTOINCREMENT), since
    # batches own their events by seq range.
    Column("seq", Id, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("event_type", String(64), nullable=False),
    Column("occurred_at", Instant, nullable=False),
    Column("payload", Json, nullable=False),
    # HMAC of the address the event carries (same key as deletions), so erasure can discard it.
    Column("subscriber_key", String(64), index=True),
    Column("created_at", Instant, nullable=False),
    sqlite_autoincrement=True,
    **TABLE_OPTIONS,
)

day_rollups = Table(
    "nc_day_rollups",
    metadata,
    # A settled UTC day's rollup (its wire figures without ``source``), computed once for the
    # admin pages; the export computes every rollup on demand.
    Column("day", Date, primary_key=True),
    Column("figures", Json, nullable=False),
    Column("kept_at", Instant, nullable=False),
    **TABLE_OPTIONS,
)

job_runs = Table(
    "nc_job_runs",
    metadata,
    # e.g. "rollup:2026-11-20": inserting the key claims the job once, across runners.
    Column("job_key", String(100), primary_key=True),
    Column("ran_at", Instant, nullable=False),
    **TABLE_OPTIONS,
)

rate_limit_counters = Table(
    "nc_rate_limit_counters",
    metadata,
    # The rate limiter's key: the form and the client address's keyed hash, never the address.
    Column("key", String(200), primary_key=True),
    Column("hits", Integer, nullable=False),
    Column("expires_at", Instant, nullable=False, index=True),  # pruning deletes by it
    **TABLE_OPTIONS,
)

platform_feedback = Table(
    "nc_platform_feedback",
    metadata,
    # The platform's id of the item: storing it claims the item, so a retry applies nothing.
    Column("id", String(200), primary_key=True),
    Column("kind", String(16), nullable=False),
    # Keyed hash of the address (as in deletions); NULL once the address is erased.
    Column("email_hmac", String(64), index=True),
    Column("reason", LongText),
    Column("occurred_at", Instant, nullable=False),
    Column("received_at", Instant, nullable=False),
    Column("outcome", String(16), nullable=False),
    CheckConstraint(_in("kind", FEEDBACK_KINDS), name="kind"),
    **TABLE_OPTIONS,
)

suppressions = Table(
    "nc_suppressions",
    metadata,
    # An address the platform reported while no subscriber had it, by its keyed hash only.
    Column("email_hmac", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("occurred_at", Instant, nullable=False),
    Column("recorded_at", Instant, nullable=False),
    CheckConstraint(_in("kind", FEEDBACK_KINDS), name="kind"),
    **TABLE_OPTIONS,
)

admin_users = Table(
    "nc_admin_users",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("username", String(100), nullable=False, unique=True),
    # argon2id, parameters included (rehashed on login when they change); never the password.
    Column("password_hash", String(255), nullable=False),
    Column("created_at", Instant, nullable=False),
    Column("role", String(16), nullable=False, server_default=OWNER),
    CheckConstraint(_in("role", ADMIN_ROLES), name="role"),
    **TABLE_OPTIONS,
)

admin_sessions = Table(
    "nc_admin_sessions",
    metadata,
    # SHA-256 of the cookie's token: a database read never yields a usable session.
    Column("token_digest", String(64), primary_key=True),
    Column("username", String(100), nullable=False, index=True),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", Instant, nullable=False, index=True),
    Column("last_seen_at", Instant, nullable=False, index=True),
    **TABLE_OPTIONS,
)

admin_audit = Table(
    "nc_admin_audit",
    metadata,
    # Append order: the latest acts are read by keyset on id.
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("at", Instant, nullable=False),
    Column("actor", String(200), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target", String(200)),
    # What the act recorded besides its target (an erasure clears it with the target).
    Column("detail", String(500)),
    # Keyed hash of the client address (as the rate limits key it), never the address.
    Column("client_hash", String(64)),
    # An erasure rewrites the acts that name its address.
    Index(None, "target"),
    **TABLE_OPTIONS,
)

# Acts on every subscriber matching a filter, worked through by the sync runner under a lease.
bulk_jobs = Table(
    "nc_bulk_jobs",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("act", String(32), nullable=False),
    Column("filter", Json, nullable=False),
    Column("filter_text", String(2000), nullable=False),
    Column("requested_by", String(200), nullable=False),
    Column("requested_at", Instant, nullable=False),
    Column("expected", Integer, nullable=False),
    Column("expected_exact", Boolean, nullable=False),
    Column("position_at", Instant, nullable=False),
    Column("position_id", Id, nullable=False),
    Column("changed", Integer, nullable=False),
    Column("unchanged", Integer, nullable=False),
    Column("missing", Integer, nullable=False),
    Column("started_at", Instant),
    Column("finished_at", Instant),
    Column("stopped_by", String(200)),
    Column("lease", String(64)),
    Column("lease_until", Instant),
    # Runners look for the unfinished jobs on every loop.
    Index("ix_nc_bulk_jobs_unfinished", "finished_at", "id"),
    **TABLE_OPTIONS,
)

import_jobs = Table(
    "nc_import_jobs",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("file_name", String(200), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("lines", Integer, nullable=False),
    Column("phase", String(16), nullable=False),
    Column("options", Json, nullable=False),
    # The encoding the file arrived in; its parts hold its text in UTF-8.
    Column("encoding", String(16), nullable=False, server_default="utf-8"),
    Column("requested_by", String(200), nullable=False),
    Column("requested_at", Instant, nullable=False),
    Column("position", Integer, nullable=False),
    Column("counts", Json, nullable=False),
    Column("refusals", Json, nullable=False),
    Column("checked_counts", Json, nullable=False),
    Column("started_by", String(200)),
    Column("started_at", Instant),
    Column("finished_at", Instant),
    Column("stopped_by", String(200)),
    Column("lease", String(64)),
    Column("lease_until", Instant),
    # Runners look for the jobs in a worked phase on every loop.
    Index("ix_nc_import_jobs_phase", "phase", "id"),
    **TABLE_OPTIONS,
)

import_file_parts = Table(
    "nc_import_file_parts",
    metadata,
    # An uploaded file's text in UTF-8, in parts of about a MiB, read back in order by the
    # runner and searched by erasure.
    Column("job_id", Id, ForeignKey("nc_import_jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("data", LongBinary, nullable=False),
    **TABLE_OPTIONS,
)

commit_horizons = Table(
    "nc_commit_horizons",
    metadata,
    # MySQL and MariaDB: one row per commit horizon, locked shared by every insert behind it
    # and exclusively while the horizon is read (storage.host_sql.CommitHorizon).
    Column("name", String(64), primary_key=True),
    **TABLE_OPTIONS,
)

ALL_TABLES = tuple(metadata.sorted_tables)
