"""The records of the subscriber, issue, feedback, erasure, contact-message and analytics
repositories: plain frozen values they take and return (the outbox's are in
:mod:`.outbox_records`, the access repositories' in :mod:`.access_records`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

__all__ = [
    "AnalyticsEventRecord",
    "ContactMessageRecord",
    "DayTraffic",
    "DeletionRecord",
    "EmailPrefs",
    "FeedbackKind",
    "FeedbackRecord",
    "IssueRecord",
    "ModelUsage",
    "NewIssue",
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
    #: The id of the ``newsletter.issue`` event queued with it (``None``: none was queued).
    event_id: str | None = None


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
    #: The id of the ``newsletter.issue`` event queued with it (``None``: none was queued).
    event_id: str | None = None


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


@dataclass(frozen=True)
class AnalyticsEventRecord:
    """One stored analytics event (docs/export.md, "GET /api/export/events"), already sanitised at
    capture."""

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
