"""The records of the storage contract: plain frozen values its repositories take and return
(:mod:`newsletter_connector.storage` re-exports every one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import Any, Literal

from .https_rule import without_credentials
from .json_encoding import dumps_text, loads

__all__ = [
    "AdminAuditRecord",
    "AdminSessionRecord",
    "AdminUserRecord",
    "AnalyticsEventRecord",
    "ApiKeyRecord",
    "ClaimedBatch",
    "ConnectionRecord",
    "ContactMessageRecord",
    "DayTraffic",
    "DeletionRecord",
    "EmailPrefs",
    "FeedbackKind",
    "FeedbackRecord",
    "IssueRecord",
    "ModelUsage",
    "NewEvent",
    "NewIssue",
    "OutboxBatchRecord",
    "OutboxEvent",
    "OutboxStatus",
    "SubscriberData",
    "SubscriberDay",
    "SubscriberRecord",
    "SuppressionRecord",
    "TokenKind",
]

TokenKind = Literal["confirm", "unsubscribe", "profile"]
#: What the connected platform reports about an address.
FeedbackKind = Literal["bounce", "complaint", "unsubscribe"]


@dataclass(frozen=True)
class ApiKeyRecord:
    """A Newsletter API key as stored: never the key itself, only its SHA-256 digest."""

    id: int
    label: str
    key_prefix: str
    created_at: datetime
    revoked_at: datetime | None
    #: The last UTC day a request authenticated with the key (``None``: not since recorded).
    last_used_on: date | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class AdminUserRecord:
    """A user of the built-in admin login. ``password_hash`` is an argon2id hash (never the
    password) and stays out of ``repr``."""

    id: int
    username: str
    password_hash: str = field(repr=False)
    created_at: datetime


@dataclass(frozen=True)
class AdminSessionRecord:
    """A signed-in admin session. ``token_digest`` is the SHA-256 hex of the cookie's token
    (the token itself is never stored); ``csrf_token`` guards its forms. Both stay out of
    ``repr``."""

    token_digest: str = field(repr=False)
    username: str
    csrf_token: str = field(repr=False)
    created_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class AdminAuditRecord:
    """One admin act: who (``actor``), what (``action``, e.g. ``api_key.create``), on what
    (``target``, e.g. a key's label; never a secret) and from where (``client_hash``, a keyed
    hash of the client address, never the address)."""

    id: int
    at: datetime
    actor: str
    action: str
    target: str | None
    client_hash: str | None


@dataclass(frozen=True)
class ConnectionRecord:
    """The operator-configured connection to the mailing platform. ``repr`` leaves out the
    token and any credentials in ``platform_base``, so logging a connection never leaks them."""

    id: int
    platform_base: str
    transport: str
    token: str
    created_at: datetime
    disabled_at: datetime | None

    def __repr__(self) -> str:
        return (
            f"ConnectionRecord(id={self.id}, "
            f"platform_base={without_credentials(self.platform_base)!r}, "
            f"transport={self.transport!r}, token=<hidden>, disabled_at={self.disabled_at!r})"
        )


@dataclass(frozen=True)
class NewIssue:
    """An issue about to be recorded by a digest run (everything but the stored identity)."""

    uuid: str
    kind: str
    cadence: str
    issue_date: str
    subject: str
    site_url: str
    postal_address: str | None
    sections: dict[str, Any]
    html: str
    text: str | None
    period_key: str | None
    created_at: datetime


@dataclass(frozen=True)
class IssueRecord:
    """A recorded newsletter issue. ``html`` and ``text`` are ``None`` when listed without
    bodies; a loaded ``html`` is never empty, ``text`` is the plain-text rendering if stored."""

    id: int
    uuid: str
    kind: str
    cadence: str
    issue_date: str
    subject: str
    site_url: str
    postal_address: str | None
    sections: dict[str, Any]
    html: str | None
    text: str | None
    period_key: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class EmailPrefs:
    """Email cadences of a subscriber: each ``off``, ``daily`` or ``weekly``."""

    briefings: str
    puzzles: str
    on_this_day: str
    local: str


@dataclass(frozen=True, kw_only=True)
class SubscriberData:
    """Everything stored about a subscriber except its id (what ``add`` and ``save`` take).

    ``email`` is already normalised (trimmed, lowercased). Link tokens are secrets: they are
    left out of ``repr``, as is the phone number."""

    email: str
    first_name: str | None
    last_name: str | None
    zip: str | None
    phone: str | None = field(repr=False)
    sms_enabled: bool
    prefs: EmailPrefs
    status: str
    age_range: str | None
    gender: str | None
    gender_self: str | None = field(repr=False)
    categories: tuple[str, ...]
    consent_source: str | None
    consent_collected_at: datetime | None
    created_at: datetime
    updated_at: datetime
    confirmed_at: datetime | None
    unsubscribed_at: datetime | None
    bounced_at: datetime | None
    profile_completed_at: datetime | None
    confirm_token: str = field(repr=False)
    unsubscribe_token: str = field(repr=False)
    profile_token: str = field(repr=False)


@dataclass(frozen=True, kw_only=True)
class SubscriberRecord(SubscriberData):
    """A stored subscriber. ``id`` is its creation order: ids only ever increase."""

    id: int


@dataclass(frozen=True)
class SubscriberDay:
    """One UTC day's subscriber changes: addresses added (``created_at``), unsubscribed and
    bounced that day (by the timestamp each status change stamped)."""

    day: date
    signups: int
    unsubscribes: int
    bounces: int


@dataclass(frozen=True)
class DeletionRecord:
    """Evidence of an erasure: a keyed hash of the address (never the address), the status
    before (``None``: the address had no subscriber), how many of its outbox events were still
    undelivered and how many contact messages it had sent."""

    id: int
    email_hmac: str
    previous_status: str | None
    deleted_at: datetime
    discarded_events: int
    erased_messages: int


@dataclass(frozen=True)
class FeedbackRecord:
    """One feedback item the platform posted, kept so a retried item is applied once.

    ``email_hmac`` is the keyed hash of the address (never the address); ``outcome`` says what
    applying it did (``bounced``, ``unsubscribed``, ``unchanged`` or ``suppressed``). Erasing the
    address clears ``email_hmac`` and ``reason`` but keeps the row, so a late retry of the item
    still changes nothing.
    """

    id: str
    kind: FeedbackKind
    email_hmac: str | None
    reason: str | None
    occurred_at: datetime
    received_at: datetime
    outcome: str


@dataclass(frozen=True)
class SuppressionRecord:
    """An address the platform reported (bounce, complaint, unsubscribe) while no subscriber
    had it: keyed by the address's keyed hash, so a later import cannot make it mailable."""

    email_hmac: str
    kind: FeedbackKind
    occurred_at: datetime
    recorded_at: datetime


@dataclass(frozen=True)
class ContactMessageRecord:
    """One contact-form message, as received."""

    id: int
    email: str
    name: str | None
    message: str
    submitted_at: datetime


@dataclass(frozen=True, eq=False)
class OutboxEvent:
    """One queued event as the runner hands it to a transport. ``event_id`` never changes.

    ``payload_json`` is the payload, a JSON object, as text: a transport sending it unchanged
    splices it into its body; :attr:`payload` decodes it once, when first read. ``repr`` shows
    neither (a payload may carry a contact's data). Equal events have equal decoded payloads."""

    seq: int
    event_id: str
    event_type: str
    occurred_at: datetime
    payload_json: str = field(repr=False)

    @classmethod
    def with_payload(
        cls,
        seq: int,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
    ) -> OutboxEvent:
        """The event of an already decoded ``payload``."""
        text = dumps_text(payload)
        event = cls(seq, event_id, event_type, occurred_at, text)
        event.__dict__["payload"] = payload  # what the cached property would decode
        return event

    @cached_property
    def payload(self) -> dict[str, Any]:
        payload = loads(self.payload_json)
        if not isinstance(payload, dict):
            raise ValueError(f"the payload of event {self.event_id} is not a JSON object")
        return payload

    def _compared(self) -> tuple[Any, ...]:
        return (self.seq, self.event_id, self.event_type, self.occurred_at, self.payload)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OutboxEvent):
            return NotImplemented
        return self._compared() == other._compared()

    __hash__ = None  # type: ignore[assignment]  # equality reads the payload, a dict


@dataclass(frozen=True)
class NewEvent:
    """One event to queue; its fields are :meth:`OutboxRepository.enqueue`'s keywords.
    ``subscriber_key`` is the keyed hash of the address the payload carries, or ``None``."""

    event_id: str
    event_type: str
    occurred_at: datetime
    payload: dict[str, Any] = field(repr=False)  # it may carry a contact's data
    subscriber_key: str | None
    created_at: datetime


@dataclass(frozen=True)
class ClaimedBatch:
    """A frozen batch leased to one runner until ``lease_until``; ``attempts`` counts the
    attempt this claim starts (1 on the first try)."""

    id: str
    attempts: int
    lease_until: datetime
    events: Sequence[OutboxEvent]


@dataclass(frozen=True)
class OutboxBatchRecord:
    """A batch as the operator tools show it (no payloads)."""

    id: str
    state: str
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    created_at: datetime
    settled_at: datetime | None
    event_count: int


@dataclass(frozen=True)
class OutboxStatus:
    """The figures of ``outbox status`` and the Prometheus metrics: batches by state (every
    state, zero when none), queued events not yet in a batch, the ``occurred_at`` of the oldest
    event neither delivered nor failed, and the newest error of a pending or failed batch."""

    batches: dict[str, int]
    unbatched: int
    undelivered_events: int
    failed_events: int
    oldest_pending_at: datetime | None
    last_error: str | None
    #: Pending batches that failed at least once and wait for their next attempt.
    waiting_retry: int = 0
    #: When the most recent delivered batch was accepted.
    last_delivered_at: datetime | None = None


@dataclass(frozen=True)
class AnalyticsEventRecord:
    """One stored analytics event (SPEC 2.5), already sanitised at capture."""

    id: int
    occurred_at: datetime
    event_type: str
    visitor_id: str
    session_id: str
    path: str
    referrer: str
    props: dict[str, Any] | None
    engaged_seconds: float | None


@dataclass(frozen=True)
class DayTraffic:
    """Aggregates of one UTC day's analytics events (computed by the backend, set-based)."""

    pageviews: int = 0
    unique_visitors: int = 0
    sessions: int = 0
    link_clicks: int = 0
    new_visitors: int = 0
    avg_engagement_seconds: float | None = None
    issues: int = 0
    top_pages: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ModelUsage:
    """One UTC day's LLM calls of one model."""

    model: str
    calls: int
    failures: int
    prompt_tokens: int
    completion_tokens: int
