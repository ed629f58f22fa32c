"""Helpers shared by the subscriber and contact-message tests."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import quote

from sqlalchemy import select

from newsletter_connector.json_encoding import dumps
from newsletter_connector.plugins.sql_store.tables import outbox_events
from newsletter_connector.storage.outbox_records import NewEvent

API = "/api/newsletter/v1"
SUBSCRIBERS = f"{API}/subscribers"
MESSAGES = f"{API}/contact-messages"

#: The contact's field order (docs/newsletter-api.md, "Sign up").
CONTACT_FIELDS = [
    "email",
    "first_name",
    "last_name",
    "zip",
    "prefs",
    "status",
    "age_range",
    "gender",
    "gender_self",
    "categories",
    "profile_completed_at",
    "created_at",
    "confirmed_at",
    "unsubscribed_at",
    "unsubscribe_url",
    "profile_url",
]


def walk_all_emails(service: Any) -> list[str]:
    """Every subscriber's address, walked by cursor through the service (pages of 500)."""
    emails: list[str] = []
    cursor = None
    while True:
        page = service.subscribers.list_page(cursor=cursor, limit=500)
        emails += [record.email for record in page.items]
        if page.next_cursor is None:
            return emails
        cursor = page.next_cursor


def one(email: str) -> str:
    return f"{SUBSCRIBERS}/{quote(email, safe='')}"


def post(client: Any, auth: dict[str, str], body: Any) -> Any:
    return client.simulate_post(SUBSCRIBERS, headers=auth, body=json.dumps(body))


def patch(client: Any, auth: dict[str, str], email: str, body: Any) -> Any:
    return client.simulate_patch(one(email), headers=auth, body=json.dumps(body))


def wire(value: Any) -> bytes:
    """How the app serialises JSON (its one encoder)."""
    return dumps(value)


def outbox(service: Any) -> list[dict[str, Any]]:
    """Every queued event, oldest first: ``{type, payload, subscriber_key}``."""
    with service.storage.engine.connect() as connection:
        rows = connection.execute(select(outbox_events).order_by(outbox_events.c.seq)).mappings()
        return [
            {
                "type": row["event_type"],
                "payload": row["payload"],
                "subscriber_key": row["subscriber_key"],
            }
            for row in rows
        ]


def events_of(service: Any, event_type: str) -> list[dict[str, Any]]:
    return [event for event in outbox(service) if event["type"] == event_type]


def signup_event(n: int = 0, event_id: str | None = None) -> NewEvent:
    """A ``newsletter.signup`` event for ``SqlStorage.add_subscriber``: payload ``{"n": n}``, a
    fresh id unless ``event_id`` is given (reuse one to make the insert fail)."""
    at = datetime(2026, 11, 21, 12, 0)
    return NewEvent(
        event_id=event_id or str(uuid.uuid4()),
        event_type="newsletter.signup",
        occurred_at=at,
        payload={"n": n},
        subscriber_key="key",
        created_at=at,
    )
