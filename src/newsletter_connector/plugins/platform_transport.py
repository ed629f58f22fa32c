"""The built-in ``platform`` transport: the live platform mapping (docs/delivery.md, "platform: the
live platform mapping"), one request per event under ``platform_base``, each with the event id as
``Idempotency-Key``.

The mapping, event by event, is in docs/delivery.md. Every contact push carries ``status``; a
body carries ``consent`` or ``confirm``, never both. Test issues and rollups are not pushed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import httpx

from ..descriptors import OutboundTransport
from ..hookspecs import hookimpl
from ..https_rule import without_credentials
from ..json_encoding import dumps
from ..settings import Settings
from ..storage.access_records import ConnectionRecord
from ..storage.outbox_records import OutboxEvent
from ..storage.transport import bearer_headers, require_2xx

log = logging.getLogger(__name__)

ISSUE_PATH = "/api/v1/sites/ingest/newsletter-issue"
UPSERT_PATH = "/api/v1/sites/ingest/newsletter"
UNSUBSCRIBE_PATH = "/api/v1/sites/ingest/unsubscribe"

#: Events with no live endpoint: acknowledged without a request.
NOT_PUSHED = frozenset({"analytics.daily_rollup"})


def contact_upsert(event_type: str, contact: dict[str, Any]) -> dict[str, Any]:
    """The upsert body for a newsletter.* event carrying a contact
    (docs/newsletter-api.md, "Sign up")."""
    status = contact.get("status")
    body: dict[str, Any] = {
        "email": contact["email"],
        "firstName": contact.get("first_name"),
        "lastName": contact.get("last_name"),
        "status": status,
    }
    if "phone" in contact:  # present only with SMS consent
        body["phone"] = contact["phone"]
    if status == "confirmed":
        body["consent"] = True
    elif status == "pending" and event_type == "newsletter.signup":
        body["confirm"] = True
        body["confirmRedirectUrl"] = contact.get("confirm_url")
    prefs = contact.get("prefs") or {}
    body["fields"] = {
        "topics": list(contact.get("categories") or []),
        "frequency": dict(prefs.get("email") or {}),
        "zip": contact.get("zip"),
        "ageRange": contact.get("age_range"),
        "gender": contact.get("gender"),
        "genderSelf": contact.get("gender_self"),
        "smsEnabled": bool((prefs.get("sms") or {}).get("enabled", False)),
        "unsubscribeUrl": contact.get("unsubscribe_url"),
        "profileUrl": contact.get("profile_url"),
        "profileCompletedAt": contact.get("profile_completed_at"),
    }
    return body


def message_upsert(message: dict[str, Any]) -> dict[str, Any]:
    """The upsert for a contact.message: never consent, never a subscriber status."""
    return {
        "email": message["email"],
        "status": None,
        "fields": {
            "stream": "contact",
            "contactMessage": message["message"],
            "contactName": message.get("name"),
            "contactMessageId": message.get("id"),
            "contactMessageAt": message.get("submitted_at"),
        },
    }


def is_test_issue(event: OutboxEvent) -> bool:
    """Whether ``event`` announces an issue of kind ``test``, which never reaches readers."""
    return event.event_type == "newsletter.issue" and event.payload.get("kind") == "test"


def request_for(event: OutboxEvent, *, send_now: bool) -> tuple[str, dict[str, Any]] | None:
    """``(path, body)`` for one event, or ``None`` for events that are not pushed."""
    payload = event.payload
    kind = event.event_type
    if kind == "newsletter.issue":
        if is_test_issue(event):
            return None
        issue: dict[str, Any] = {
            "subject": payload["subject"],
            "html": payload["html"],
            "idempotencyKey": event.event_id,
        }
        if send_now:
            issue["sendNow"] = True
        return ISSUE_PATH, issue
    if kind in ("newsletter.unsubscribed", "newsletter.bounced"):
        reason = kind.split(".", 1)[1]
        return UNSUBSCRIBE_PATH, {
            "email": payload["email"],
            "reason": reason,
            "status": payload.get("status", reason),
        }
    if kind in ("newsletter.signup", "newsletter.confirmed", "newsletter.profile_completed"):
        return UPSERT_PATH, contact_upsert(kind, payload)
    if kind == "contact.message":
        return UPSERT_PATH, message_upsert(payload)
    if kind in NOT_PUSHED:
        return None
    raise ValueError(f"the platform transport has no mapping for event type {kind!r}")


class PlatformTransport:
    """One request per event, in order; the first failure fails the batch."""

    max_batch_size = 20
    max_requests_per_batch = 20

    def __init__(self, connection: ConnectionRecord, http_client: httpx.Client) -> None:
        self.base = connection.platform_base
        self.token = connection.token
        self.http = http_client
        self.send_now = True

    def __repr__(self) -> str:
        return f"PlatformTransport(base={without_credentials(self.base)!r})"

    def configure(self, settings: Settings) -> None:
        self.send_now = settings.platform_send_now

    def deliver(self, events: Sequence[OutboxEvent]) -> None:
        for event in events:
            mapped = request_for(event, send_now=self.send_now)
            if mapped is None:
                if is_test_issue(event):
                    log.info(
                        "test issue event %s settled without a request: a test issue is "
                        "never sent to readers",
                        event.event_id,
                    )
                else:
                    log.debug(
                        "event %s (%s) has no live endpoint", event.event_id, event.event_type
                    )
                continue
            path, body = mapped
            response = self.http.post(
                self.base + path,
                content=dumps(body),
                headers=bearer_headers(self.token, idempotency_key=event.event_id),
            )
            require_2xx(response)


@hookimpl(trylast=True)
def newsletter_outbound_transports() -> list[OutboundTransport]:
    return [
        OutboundTransport(
            name="platform",
            description="the live platform mapping: one request per event under platform_base",
            factory=PlatformTransport,
        )
    ]
