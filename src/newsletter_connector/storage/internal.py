"""The product's own repositories, always served by the built-in SQL tables in the same
database as the subscribers, whichever subscriber store a host picks: API keys, settings, the
platform connection, issues, erasure evidence, platform feedback and suppressions, contact
messages, once-only job claims and rate-limit counters. (The outbox, analytics and admin
repositories are in :mod:`.outbox`, :mod:`.analytics` and :mod:`.admin`.)"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, Protocol

from .access_records import ApiKeyRecord, ConnectionRecord
from .records import (
    ContactMessageRecord,
    DeletionRecord,
    FeedbackKind,
    FeedbackRecord,
    IssueRecord,
    NewIssue,
    SuppressionRecord,
)


class ApiKeyRepository(Protocol):
    """Newsletter API keys, looked up by the SHA-256 hex digest of the presented key."""

    def add(self, *, label: str, key_prefix: str, key_digest: str, created_at: datetime) -> int:
        """Store a new key; its id. Raises ``InvalidRequest`` if the label is taken."""

    def find_active_by_digest(self, key_digest: str) -> ApiKeyRecord | None:
        """The unrevoked key with this digest, or ``None``."""

    def list(self) -> list[ApiKeyRecord]:
        """Every key, revoked ones included, oldest first."""

    def revoke(self, label_or_id: str, *, at: datetime) -> ApiKeyRecord | None:
        """Revoke the key with this label (or numeric id); ``None`` when none matches. A key
        revoked again keeps its first revocation time."""

    def mark_used(self, key_id: int, *, on: date) -> None:
        """Record that the key was used on the UTC day ``on``; a later day already recorded
        is kept (one conditional write)."""


class SettingsRepository(Protocol):
    """Small JSON values stored by name (site secret, list-source credentials, ...)."""

    def get(self, name: str) -> Any | None:
        """The stored value, or ``None``."""

    def put(self, name: str, value: Any, *, at: datetime) -> None:
        """Store ``value`` under ``name``, replacing any previous value; callers racing on
        one name never fail, and the last to commit wins."""

    def put_if_absent(self, name: str, value: Any, *, at: datetime) -> Any:
        """Store ``value`` unless ``name`` exists; the value stored now (racing callers get
        the same winner)."""

    def delete(self, name: str) -> bool:
        """Remove ``name``; true if it existed."""


class ConnectionRepository(Protocol):
    """The platform connection; at most one is active at a time."""

    def active(self) -> ConnectionRecord | None:
        """The active connection, or ``None`` when none is configured."""

    def replace(
        self, *, platform_base: str, transport: str, token: str, at: datetime
    ) -> ConnectionRecord:
        """Disable any active connection and make a new one active."""

    def disable(self, *, at: datetime) -> bool:
        """Disable the active connection; true if there was one."""


class IssueRepository(Protocol):
    """Recorded newsletter issues, in recording order (ids increase)."""

    def add(self, issue: NewIssue) -> IssueRecord | None:
        """Record ``issue``; ``None``, storing nothing, when ``issue.period_key`` is set and an
        issue with that key exists (a scheduled run happens once per period, however many
        runners race)."""

    def find_by_period(self, period_key: str) -> IssueRecord | None:
        """The issue recorded for this period key, or ``None``."""

    def latest(self) -> IssueRecord | None:
        """The most recently recorded issue, or ``None``."""

    def list_recent(
        self, limit: int, *, include_bodies: bool, before_id: int | None = None
    ) -> list[IssueRecord]:
        """Up to ``limit`` issues, most recently recorded first, only those with
        ``id < before_id`` when given (the keyset of the next page); ``html`` and ``text`` are
        ``None`` (and unread) unless ``include_bodies``."""

    def get(self, issue_id: int) -> IssueRecord | None:
        """The issue with this id, or ``None``."""

    def count(self) -> int:
        """How many issues are stored."""

    def list_by_creation(self, *, descending: bool, offset: int, limit: int) -> list[IssueRecord]:
        """At most ``limit`` issues in creation order ``(created_at, id)``, newest first when
        ``descending``, skipping the first ``offset`` of that order."""


class DeletionRepository(Protocol):
    """Erasure evidence."""

    def add(
        self,
        *,
        email_hmac: str,
        previous_status: str | None,
        deleted_at: datetime,
        discarded_events: int,
        erased_messages: int,
    ) -> DeletionRecord:
        """Record an erasure."""

    def find(self, email_hmac: str) -> list[DeletionRecord]:
        """Every erasure of the address with this keyed hash, oldest first."""


class FeedbackRepository(Protocol):
    """What the connected platform reported (bounces, complaints, unsubscribes), and the
    suppressions it left for addresses no subscriber had."""

    def claim(self, record: FeedbackRecord) -> bool:
        """Store ``record`` unless an item with its id is stored; true when this call stored
        it. A concurrent claim of the same id waits for the other unit of work and then answers
        false, so each item is applied once."""

    def set_outcome(self, feedback_id: str, outcome: str) -> None:
        """Record what applying the claimed item ``feedback_id`` did."""

    def history(self, email_hmac: str) -> list[FeedbackRecord]:
        """The items about the address with this keyed hash, oldest first."""

    def suppress(
        self, *, email_hmac: str, kind: FeedbackKind, occurred_at: datetime, at: datetime
    ) -> None:
        """Record a suppression of the address; one already recorded is kept as it is."""

    def suppression(self, email_hmac: str) -> SuppressionRecord | None:
        """The suppression of the address with this keyed hash, if any."""

    def suppressions(self, email_hmacs: Sequence[str]) -> dict[str, SuppressionRecord]:
        """The suppressions of the addresses with these keyed hashes (an import's chunk at
        once), by keyed hash; an address without one is left out."""

    def lift(self, email_hmac: str) -> bool:
        """Remove the address's suppression; whether there was one."""

    def forget(self, email_hmac: str) -> int:
        """Erasure: remove the address's suppression and clear ``email_hmac`` and ``reason``
        of its items (the items stay, so a retry is still recognised); how many items."""


class ContactMessageRepository(Protocol):
    """The contact-form log, in arrival order, until its sender's address is erased."""

    def add(
        self, *, email: str, name: str | None, message: str, submitted_at: datetime
    ) -> ContactMessageRecord:
        """Append a message; ids grow with arrival order."""

    def list_page(self, *, after_id: int | None, limit: int) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages with id above ``after_id``, in id order."""

    def list_page_desc(self, *, before_id: int | None, limit: int) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages with id below ``before_id`` (``None``: from the newest),
        newest first. Keyset on the primary key, never OFFSET."""

    def delete_from(self, email: str) -> int:
        """Erase every message sent from ``email`` (normalised, as stored); how many."""


class JobRunsRepository(Protocol):
    """Once-only jobs, claimed by key across every runner."""

    def claim(self, job_key: str, *, at: datetime) -> bool:
        """Record ``job_key`` as run; true if this call claimed it. Of racing transactions,
        exactly one gets true."""

    def latest(self, prefix: str) -> str | None:
        """The greatest claimed key starting with ``prefix`` (string order), or ``None``."""


class RateLimitRepository(Protocol):
    """Fixed-window hit counters by key, shared by every process using the store. A counter
    lives from its first hit until its ``expires_at``; from then on a hit starts it anew and
    reads see none. Keys are opaque (at most 200 characters; a keyed hash, never an address)."""

    def hit(self, key: str, *, now: datetime, expires_at: datetime, amount: int = 1) -> int:
        """Add ``amount`` to the counter of ``key`` and return its new count, atomically: a
        missing or expired counter starts at ``amount`` and expires at ``expires_at``; a live
        one keeps its expiry. Concurrent hits on one key never lose a count."""

    def peek(self, key: str, *, now: datetime) -> tuple[int, datetime | None]:
        """The live counter of ``key`` as ``(count, expires_at)``; ``(0, None)`` if none."""

    def clear(self, key: str) -> None:
        """Forget the counter of ``key``."""

    def prune(self, *, expired_by: datetime) -> int:
        """Delete the counters expired at ``expired_by``; how many. Never waits for a counter
        another transaction is writing (a later prune takes it)."""
