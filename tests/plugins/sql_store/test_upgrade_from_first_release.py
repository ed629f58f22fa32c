"""Upgrades: a database made by the first released schema (Alembic revision 0001), with data in
every table, is upgraded to head by ``newsletter-connector db upgrade`` with its data intact,
and the service works on it. Runs on SQLite, and on the server (PostgreSQL, MySQL, MariaDB)
``NEWSLETTER_TEST_DATABASE_URL`` names. Whatever head is, the walk starts at 0001."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, select
from sqlalchemy.engine import Engine

from newsletter_connector.plugins.sql_store import migrate
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.service import NewsletterService
from newsletter_connector.settings import Settings
from newsletter_connector.testing.databases import server_url, temporary_database

pytestmark = pytest.mark.system

FIRST_RELEASE = "0001"
T = datetime(2026, 11, 20, 9, 30, 0, 123456)
API_KEY = "nlk_" + "k" * 43
SITE_SECRET = "secret-stored-by-the-first-release-0123456789abcdef"
BATCH = "6f1c0b8e-0000-4000-8000-000000000001"
CONFIRM_TOKEN = "c" * 32

#: One row per table of the 0001 schema, inserted in this order (batches before their events).
ROWS: dict[str, list[dict[str, Any]]] = {
    "nc_settings": [{"name": "site_secret", "value": SITE_SECRET, "updated_at": T}],
    "nc_api_keys": [
        {
            "label": "crm",
            "key_prefix": API_KEY[:8],
            "key_digest": hashlib.sha256(API_KEY.encode()).hexdigest(),
            "created_at": T,
            "revoked_at": None,
        }
    ],
    "nc_connections": [
        {
            "platform_base": "https://platform.example.test",
            "transport": "events",
            "token": "connection-token-0123456789",
            "created_at": T,
            "disabled_at": None,
        }
    ],
    "nc_subscribers": [
        {
            "email": "old@example.org",
            "first_name": "Öla",
            "last_name": None,
            "zip": "02134",
            "phone": "+1 555 0100",
            "sms_enabled": True,
            "pref_briefings": "daily",
            "pref_puzzles": "weekly",
            "pref_on_this_day": "off",
            "pref_local": "off",
            "status": "pending",
            "age_range": "75_84",
            "gender": None,
            "gender_self": None,
            "categories": ["health", "money"],
            "consent_source": None,
            "consent_collected_at": None,
            "created_at": T,
            "updated_at": T,
            "confirmed_at": None,
            "unsubscribed_at": None,
            "bounced_at": None,
            "profile_completed_at": None,
            "confirm_token": CONFIRM_TOKEN,
            "unsubscribe_token": "u" * 32,
            "profile_token": "p" * 32,
        }
    ],
    "nc_deletions": [
        {
            "email_hmac": "e" * 64,
            "previous_status": "confirmed",
            "deleted_at": T,
            "discarded_events": 2,
        }
    ],
    "nc_contact_messages": [
        {"email": "reader@example.org", "name": "R", "message": "Grüße\nline 2", "submitted_at": T}
    ],
    "nc_issues": [
        {
            "uuid": "0d7e2a9c-0000-4000-8000-000000000002",
            "kind": "daily",
            "cadence": "daily",
            "issue_date": "2026-11-20",
            "subject": "The first release's issue",
            "site_url": "https://news.example.test",
            "postal_address": "1 Test Street",
            "sections": {"briefing": {"title": "t"}, "topics": []},
            "html": "<p>hello {{unsubscribe_url}}</p>",
            "text": "hello",
            "period_key": "daily:2026-11-20",
            "created_at": T,
            "updated_at": T,
        }
    ],
    "nc_job_runs": [{"job_key": "rollup:2026-11-19", "ran_at": T}],
    "nc_llm_usage": [
        {
            "occurred_at": T,
            "model": "model-a",
            "ok": True,
            "prompt_tokens": 120,
            "completion_tokens": 30,
        }
    ],
    "nc_analytics_events": [
        {
            "occurred_at": T,
            "event_type": "pageview",
            "visitor_id": "v1",
            "session_id": "s1",
            "path": "/a",
            "referrer": "",
            "props": {"k": [1, 2]},
            "engaged_seconds": 12.5,
        }
    ],
    "nc_analytics_visitors": [{"visitor_id": "v1", "first_seen_at": T}],
    "nc_outbox_batches": [
        {
            "id": BATCH,
            "state": "failed",
            "attempts": 20,
            "next_attempt_at": T,
            "lease_until": None,
            "last_error": "HTTP 500",
            "created_at": T,
            "settled_at": T,
        }
    ],
    "nc_outbox_events": [
        {
            "event_id": "9a0c7b1e-0000-4000-8000-000000000003",
            "event_type": "newsletter.signup",
            "occurred_at": T,
            "payload": {"email": "old@example.org", "status": "pending"},
            "subscriber_key": "a" * 64,
            "batch_id": BATCH,
            "created_at": T,
        },
        {
            "event_id": "9a0c7b1e-0000-4000-8000-000000000004",
            "event_type": "contact.message",
            "occurred_at": T,
            "payload": {"email": "reader@example.org", "message": "Grüße"},
            "subscriber_key": None,
            "batch_id": None,
            "created_at": T,
        },
    ],
}


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database (not the session's, which is already at head)."""
    server = server_url()
    if server:
        with temporary_database(server) as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'first-release.db'}"


#: The JSON columns of the 0001 schema.
JSON_COLUMNS = {
    "nc_settings": {"value"},
    "nc_subscribers": {"categories"},
    "nc_issues": {"sections"},
    "nc_analytics_events": {"props"},
    "nc_outbox_events": {"payload"},
}


def as_stored(engine: Engine, table: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` for a reflected table: on MySQL and MariaDB a JSON column reflects as the
    ``LONGTEXT`` it is stored as, so its values go in as their JSON text."""
    if engine.dialect.name not in ("mysql", "mariadb"):
        return row
    json_columns = JSON_COLUMNS.get(table, set())
    return {k: json.dumps(v) if k in json_columns else v for k, v in row.items()}


def snapshot(engine: Engine, columns: dict[str, list[str]]) -> dict[str, list[dict[str, Any]]]:
    """Every row of the given tables, only the given columns, in primary-key order."""
    metadata = MetaData()
    metadata.reflect(engine)
    rows = {}
    with engine.connect() as connection:
        for name, names in columns.items():
            table = metadata.tables[name]
            query = select(*(table.c[c] for c in names)).order_by(*table.primary_key.columns)
            rows[name] = [dict(row) for row in connection.execute(query).mappings()]
    return rows


def test_upgrade_from_the_first_release_keeps_every_row(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        migrate.upgrade(engine, FIRST_RELEASE)
        assert migrate.current_revision(engine) == FIRST_RELEASE
        old = MetaData()
        old.reflect(engine)
        tables = {name for name in old.tables if name != migrate.VERSION_TABLE}
        assert tables == set(ROWS), "every table of the first release gets data"
        with engine.begin() as connection:
            for name, rows in ROWS.items():
                connection.execute(
                    old.tables[name].insert(), [as_stored(engine, name, r) for r in rows]
                )
        columns = {name: [c.name for c in old.tables[name].columns] for name in ROWS}
        # 0004: batches own seq ranges; events are renumbered (same order) and lose batch_id.
        # Which batch holds which event is checked through the service below.
        columns["nc_outbox_events"] = [
            c for c in columns["nc_outbox_events"] if c not in ("seq", "batch_id")
        ]
        before = snapshot(engine, columns)
        assert all(len(before[name]) == len(rows) for name, rows in ROWS.items())
    finally:
        engine.dispose()

    env = {**os.environ, "NEWSLETTER_DATABASE_URL": database_url, "NEWSLETTER_CONFIG": ""}
    env.pop("NEWSLETTER_SITE_SECRET", None)
    upgrade = subprocess.run(
        [sys.executable, "-m", "newsletter_connector", "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert upgrade.returncode == 0, upgrade.stdout + upgrade.stderr

    engine = make_engine(database_url)
    try:
        assert migrate.current_revision(engine) == migrate.head_revision()
        assert snapshot(engine, columns) == before  # every row, every value, unchanged
    finally:
        engine.dispose()

    # The service works on the upgraded data, with the secret the first release stored.
    settings = Settings(database_url=database_url, base_url="https://news.example.test/newsletter")
    service = NewsletterService.build(settings)
    try:
        service.check_ready(tolerate_outage=False)
        assert service.context.site_secret == SITE_SECRET.encode()
        assert service.admin.authenticate_api_key(API_KEY).label == "crm"
        connection = service.admin.connection()
        assert connection is not None and connection.token == "connection-token-0123456789"
        assert service.issues.latest().subject == "The first release's issue"
        confirmed = service.subscribers.confirm_by_token(CONFIRM_TOKEN)
        assert confirmed.status == "confirmed" and confirmed.categories == ("health", "money")
        with service.storage.transaction(write=False) as uow:
            status = uow.outbox.status()
            assert [(b.id, b.event_count) for b in uow.outbox.failed_batches()] == [(BATCH, 1)]
        assert status.failed_events == 1 and status.unbatched == 2  # old one + the confirmation
    finally:
        service.close()
