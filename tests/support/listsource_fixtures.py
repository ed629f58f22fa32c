"""TEST FIXTURES ONLY: rows for the list-source tests, written straight into the SQL tables.

Issues are written by the digest runs and subscribers by the subscriber service, both built
in parallel with the list-source surface. Until they are merged, these helpers insert the rows
through SQLAlchemy so the read side can be tested; switch them to the real services then.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert

from newsletter_connector.plugins.sql_store.tables import issues, subscribers

T0 = datetime(2026, 11, 1, 6, 0, 0)
HTML = '<!doctype html><p>Hello & welcome <a href="{{unsubscribe_url}}">unsubscribe</a></p>'


def _issue_values(
    *,
    created_at: datetime,
    kind: str = "daily",
    cadence: str | None = None,
    subject: str | None = None,
    html: str = HTML,
    text: str | None = "Hello and welcome",
    updated_at: datetime | None = None,
) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        "kind": kind,
        "cadence": cadence or (kind if kind in ("daily", "weekly") else "daily"),
        "issue_date": created_at.date().isoformat(),
        "subject": subject or f"News for {created_at.date().isoformat()}",
        "site_url": "https://news.example.test",
        "postal_address": "1 Test Street",
        "sections": {"briefing": None, "on_this_day": [], "topics": []},
        "html": html,
        "text": text,
        "period_key": None,
        "created_at": created_at,
        "updated_at": updated_at or created_at,
    }


def insert_issue(storage: Any, **values: Any) -> int:
    """Insert one issue row (keyword arguments as :func:`_issue_values`); return its id."""
    with storage.engine.begin() as connection:
        return int(
            connection.execute(
                insert(issues).values(**_issue_values(**values)).returning(issues.c.id)
            ).scalar_one()
        )


def insert_issues(storage: Any, count: int, *, same_time_every: int = 1) -> list[int]:
    """``count`` daily issues a day apart, in one transaction; every ``same_time_every``
    consecutive ones share one ``created_at`` (to exercise the id tie-break). Returns the ids
    in insertion order."""
    ids = []
    with storage.engine.begin() as connection:
        for n in range(count):
            values = _issue_values(created_at=T0 + timedelta(days=n // same_time_every))
            ids.append(
                int(
                    connection.execute(
                        insert(issues).values(**values).returning(issues.c.id)
                    ).scalar_one()
                )
            )
    return ids


def insert_subscriber(storage: Any, *, status: str, email: str | None = None) -> None:
    """Insert one subscriber with ``status`` (every NOT NULL column filled)."""
    now = T0
    with storage.engine.begin() as connection:
        connection.execute(
            insert(subscribers).values(
                email=email or f"{secrets.token_hex(6)}@example.org",
                sms_enabled=False,
                pref_briefings="daily",
                pref_puzzles="off",
                pref_on_this_day="off",
                pref_local="off",
                status=status,
                categories=[],
                created_at=now,
                updated_at=now,
                confirmed_at=now if status == "confirmed" else None,
                confirm_token=secrets.token_urlsafe(24),
                unsubscribe_token=secrets.token_urlsafe(24),
                profile_token=secrets.token_urlsafe(24),
            )
        )
