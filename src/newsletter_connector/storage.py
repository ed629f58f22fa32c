"""The storage contract: what every backend (the built-in SQL store or a host's own) provides.

A backend is a :class:`Storage`. All work happens inside ``storage.transaction()``, a unit of
work that commits on success and rolls back on any exception, exposing small repositories.
Every state change and the outbox events it causes are written in one such transaction.
:class:`StorageBase` answers the few one-call shortcuts of :class:`Storage` through a unit of
work, so a backend implements only the repositories and the lifecycle methods.
Backends raise :class:`~newsletter_connector.errors.DbUnavailable` when the database does not
answer and :class:`~newsletter_connector.errors.NotMigrated` when its schema is missing or old.
The records are in :mod:`.storage_records`; :mod:`newsletter_connector.testing` checks a backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import date, datetime
from typing import Any, Protocol

from .storage_records import *  # noqa: F403  (the records are part of this contract)
from .storage_records import (
    AdminAuditRecord,
    AdminSessionRecord,
    AdminUserRecord,
    AnalyticsEventRecord,
    ApiKeyRecord,
    ClaimedBatch,
    ConnectionRecord,
    ContactMessageRecord,
    DayTraffic,
    DeletionRecord,
    FeedbackKind,
    FeedbackRecord,
    IssueRecord,
    ModelUsage,
    NewEvent,
    NewIssue,
    OutboxBatchRecord,
    OutboxStatus,
    SubscriberData,
    SubscriberDay,
    SubscriberRecord,
    SuppressionRecord,
    TokenKind,
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
        """Store ``value`` under ``name``, replacing any previous value."""

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


class OutboxDeliveryRepository(Protocol):
    """What the sync runner needs from the outbox (part of :class:`OutboxRepository`). The
    settle methods act only on a batch still sending and, given the claim's ``lease_until``,
    only while that claim holds (so no runner settles an attempt of another)."""

    def claim_batches(
        self, *, now: datetime, lease_until: datetime, batch_size: int, max_batches: int
    ) -> list[ClaimedBatch]:
        """Lease up to ``max_batches`` batches until ``lease_until`` (which must cover sending
        all of them, one after the other), in sending order: first the due pending batches
        (``next_attempt_at <= now``), oldest first; then, while there is room, the oldest
        queued events frozen into new batches of at most ``batch_size`` (whose members never
        change). Each is sending with ``attempts + 1``. Concurrent callers never claim the same
        batch or freeze the same event. Events come oldest first; a batch emptied by erasure
        has none. ``[]`` when nothing is due or queued."""

    def release_claims(self, batch_ids: Sequence[str], *, lease_until: datetime) -> int:
        """Return unsent batches still sending under the claim ``lease_until`` to pending as if
        never claimed (``attempts - 1``, due time unchanged); how many."""

    def settle_delivered(
        self, batch_ids: Sequence[str], *, at: datetime, lease_until: datetime | None = None
    ) -> int:
        """Mark sending batches delivered (clearing their error); how many."""

    def schedule_retry(
        self,
        batch_id: str,
        *,
        error: str,
        next_attempt_at: datetime,
        lease_until: datetime | None = None,
    ) -> bool:
        """Return a sending batch to pending, due at ``next_attempt_at``, keeping ``error``."""

    def mark_failed(
        self, batch_id: str, *, error: str, at: datetime, lease_until: datetime | None = None
    ) -> bool:
        """Give up on a sending batch: failed, kept with ``error`` for the operator."""

    def release_expired_leases(self, *, now: datetime) -> int:
        """Return sending batches whose lease ended before ``now`` to pending, due now."""

    def prune_delivered(self, *, settled_before: datetime, limit: int = 1000) -> int:
        """Delete up to ``limit`` batches delivered before ``settled_before``, with their
        events; how many."""

    def status(self) -> OutboxStatus:
        """Counts for the operator tools (set-based; never loads rows)."""

    def failed_batches(
        self, *, after: str | None = None, limit: int = 100
    ) -> list[OutboxBatchRecord]:
        """Failed batches ordered by id, strictly after the id ``after`` (keyset paging)."""

    def get_batch(self, batch_id: str) -> OutboxBatchRecord | None:
        """One batch, or ``None``."""

    def replay_failed(self, batch_id: str | None, *, at: datetime) -> int:
        """Give one failed batch (``None``: every one) a fresh ladder: pending, attempts 0,
        due at ``at``; how many."""

    def retry_waiting_now(self, *, now: datetime) -> int:
        """Make every batch waiting for its next attempt (pending, failed at least once, due
        after ``now``) due at ``now``, in one statement; attempts are kept, so the retry ladder
        continues from its rung. Failed, delivered, sending and never-tried batches are left
        alone. How many."""


class OutboxRepository(OutboxDeliveryRepository, Protocol):
    """Outbound events, written in the same transaction as the change that caused them."""

    def enqueue(
        self,
        *,
        event_id: str,
        event_type: str,
        occurred_at: datetime,
        payload: dict[str, Any],
        subscriber_key: str | None,
        created_at: datetime,
    ) -> None:
        """Queue one event (in no batch yet); ``subscriber_key`` as in :class:`NewEvent`."""

    def discard_for_subscriber(self, subscriber_key: str) -> int:
        """Erase every stored event carrying this subscriber's address, delivered or not; how
        many of them were still undelivered."""


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


class SubscriberRepository(Protocol):
    """The subscriber list; emails passed in are already normalised (lowercase). Ids grow with
    creation order, and :meth:`list_page` never returns an id while a smaller one may still
    appear (uncommitted), so keyset walks on id never skip or repeat anyone."""

    def add(self, data: SubscriberData) -> SubscriberRecord | None:
        """Store a new subscriber; ``None`` (nothing stored) when the address is taken, also
        by a concurrent transaction."""

    def get_by_email(self, email: str, *, lock: bool = False) -> SubscriberRecord | None:
        """The subscriber with this address, or ``None``; ``lock`` holds a row lock until the
        transaction ends (for read-modify-write)."""

    def get_by_token(
        self, kind: TokenKind, token: str, *, lock: bool = False
    ) -> SubscriberRecord | None:
        """The subscriber whose ``kind`` link token is ``token``, or ``None``."""

    def save(self, record: SubscriberRecord) -> None:
        """Write every field of ``record`` (looked up by id) except ``id`` and ``email``."""

    def delete(self, subscriber_id: int) -> bool:
        """Erase the row; true if it existed."""

    def list_page(
        self, *, status: str | None, after_id: int | None, limit: int
    ) -> list[SubscriberRecord]:
        """Up to ``limit`` subscribers with id above ``after_id`` (``None``: all), in id order,
        only those with ``status`` when given. Keyset, never OFFSET."""

    def find_by_prefix(
        self, prefix: str, *, after_email: str | None, limit: int
    ) -> list[SubscriberRecord]:
        """Up to ``limit`` subscribers whose address starts with ``prefix`` (taken literally:
        ``%``, ``_`` and ``\\`` are ordinary characters; ``""`` matches all), in code-point
        order of the address (a Python sort, whatever the database's collation), only addresses
        above ``after_email`` when given. One range read of the unique email index (see
        :func:`~newsletter_connector.plugins.sql_store.prefix_range`)."""

    def count(self, *, status: str | None = None) -> int:
        """How many subscribers there are (only those with ``status`` when given)."""

    def changes_per_day(self, *, first: date, last: date) -> list[SubscriberDay]:
        """The UTC days from ``first`` to ``last`` (inclusive) on which any subscriber was
        added, unsubscribed or bounced, in day order, with how many of each (days without any
        are left out). Set-based: one grouped index range read per timestamp."""

    def mark_announced(self, subscriber_id: int, *, at: datetime, unless_since: datetime) -> bool:
        """Record that the signup is announced again at ``at``, unless its last announcement
        (the last one recorded here, else ``created_at``) came after ``unless_since``; true
        when recorded. One conditional write: of concurrent calls, at most one recorded within
        any ``at - unless_since`` span gets true."""


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


class AnalyticsRepository(Protocol):
    """Analytics events and first sightings of visitors; aggregates computed by the backend."""

    def add_event(
        self,
        *,
        occurred_at: datetime,
        event_type: str,
        visitor_id: str,
        session_id: str,
        path: str,
        referrer: str,
        props: dict[str, Any] | None,
        engaged_seconds: float | None,
    ) -> int:
        """Store one event; its id (ids grow with insertion order). Records the visitor's first
        sighting at ``occurred_at`` unless the visitor was already seen."""

    def events_after(self, after_id: int, limit: int) -> list[AnalyticsEventRecord]:
        """At most ``limit`` events with id above ``after_id``, by id."""

    def daily_traffic(
        self, start: datetime, end: datetime, *, top_pages: int
    ) -> dict[str, DayTraffic]:
        """Per UTC day (``YYYY-MM-DD``) in ``[start, end)``, its aggregates (a day without any
        event, visitor or issue may be absent). Each day's top list holds at most ``top_pages``
        paths, by views descending then path; ``issues`` counts issues recorded that day, kind
        ``test`` excluded."""


class LlmUsageRepository(Protocol):
    """One row per LLM call of a digest run."""

    def add(
        self,
        *,
        occurred_at: datetime,
        model: str,
        ok: bool,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        """Record one call."""

    def daily_usage(self, start: datetime, end: datetime) -> dict[str, list[ModelUsage]]:
        """Per UTC day in ``[start, end)``, usage by model ordered by model name."""


class JobRunsRepository(Protocol):
    """Once-only jobs, claimed by key across every runner."""

    def claim(self, job_key: str, *, at: datetime) -> bool:
        """Record ``job_key`` as run; true if this call claimed it. Of racing transactions,
        exactly one gets true."""

    def latest(self, prefix: str) -> str | None:
        """The greatest claimed key starting with ``prefix`` (string order), or ``None``."""


class DayRollupRepository(Protocol):
    """Settled days' analytics rollups, kept so the admin pages need not compute them again."""

    def kept(self, first: date, last: date) -> dict[date, dict[str, Any]]:
        """The kept figures of each day from ``first`` to ``last`` inclusive that has them."""

    def keep(self, day: date, figures: dict[str, Any], *, at: datetime) -> None:
        """Keep ``figures`` (JSON-ready) for ``day``, unless figures are already kept for it
        (racing writers keep the first; a settled day's figures are the same for all)."""


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


class AdminUserRepository(Protocol):
    """Users of the built-in admin login, by unique username."""

    def add(self, *, username: str, password_hash: str, created_at: datetime) -> AdminUserRecord:
        """Store a new user. Raises ``InvalidRequest`` (field ``username``) if it is taken."""

    def get(self, username: str) -> AdminUserRecord | None:
        """The user with this username, or ``None``."""

    def list(self) -> list[AdminUserRecord]:
        """Every user, oldest first."""

    def count(self) -> int:
        """How many users exist."""

    def set_password_hash(self, username: str, password_hash: str) -> bool:
        """Replace the user's password hash; whether the user exists."""

    def delete(self, username: str) -> bool:
        """Delete the user; whether it existed. Its sessions are left to the caller."""


class AdminSessionRepository(Protocol):
    """Signed-in admin sessions, by the SHA-256 hex digest of their cookie token."""

    def add(self, record: AdminSessionRecord) -> None:
        """Store a new session (its digest is new)."""

    def get(self, token_digest: str) -> AdminSessionRecord | None:
        """The session with this digest, or ``None``."""

    def touch(self, token_digest: str, *, at: datetime) -> None:
        """Set the session's ``last_seen_at``."""

    def delete(self, token_digest: str) -> bool:
        """Delete the session; whether it existed."""

    def delete_for_user(self, username: str) -> int:
        """Delete every session of ``username``; how many."""

    def prune(self, *, seen_before: datetime, created_before: datetime) -> int:
        """Delete sessions last seen before ``seen_before`` or created before
        ``created_before``; how many."""


class AdminAuditRepository(Protocol):
    """The append-only record of admin acts, in ``id`` order."""

    def add(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        target: str | None,
        client_hash: str | None,
    ) -> int:
        """Append one act; its id (greater than every earlier act's)."""

    def latest(self, limit: int, *, before_id: int | None = None) -> list[AdminAuditRecord]:
        """Up to ``limit`` acts, newest first, only those with ``id < before_id`` when given
        (the keyset of the next page)."""

    def replace_target(self, target: str, replacement: str) -> int:
        """Make every act whose target is ``target`` name ``replacement`` instead (an erasure:
        the address becomes its keyed hash); how many acts changed."""


class UnitOfWork(Protocol):
    """One transaction's view of the store."""

    @property
    def keys(self) -> ApiKeyRepository: ...

    @property
    def settings(self) -> SettingsRepository: ...

    @property
    def connections(self) -> ConnectionRepository: ...

    @property
    def outbox(self) -> OutboxRepository: ...

    @property
    def issues(self) -> IssueRepository: ...

    @property
    def subscribers(self) -> SubscriberRepository: ...

    @property
    def deletions(self) -> DeletionRepository: ...

    @property
    def messages(self) -> ContactMessageRepository: ...

    @property
    def feedback(self) -> FeedbackRepository: ...

    @property
    def analytics(self) -> AnalyticsRepository: ...

    @property
    def llm_usage(self) -> LlmUsageRepository: ...

    @property
    def jobs(self) -> JobRunsRepository: ...

    @property
    def day_rollups(self) -> DayRollupRepository: ...

    @property
    def rate_limits(self) -> RateLimitRepository: ...

    @property
    def admin_users(self) -> AdminUserRepository: ...

    @property
    def admin_sessions(self) -> AdminSessionRepository: ...

    @property
    def admin_audit(self) -> AdminAuditRepository: ...


class Storage(Protocol):
    """A storage backend."""

    def transaction(self, *, write: bool = True) -> AbstractContextManager[UnitOfWork]:
        """Open a unit of work; commit when the block ends, roll back if it raises. ``write``
        false is read-only work, which a backend may run with lighter locking."""

    def find_active_api_key(self, key_digest: str) -> ApiKeyRecord | None:
        """``keys.find_active_by_digest`` in a read-only unit of work (every authenticated
        request asks; a revocation is seen by the very next one)."""

    def find_active_connection(self) -> ConnectionRecord | None:
        """``connections.active()`` in a read-only unit of work (every export request asks; a
        disabled or replaced connection is refused by the very next one)."""

    def record_api_key_use(self, key_id: int, *, on: date) -> None:
        """``keys.mark_used(key_id, on=on)`` in a unit of work of its own (authentication asks
        at most once a day per key and process)."""

    def add_subscriber(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        """``subscribers.add(data)`` and, when it stored the subscriber, each event queued in
        order, all in one unit of work; ``None`` (nothing written) when the address is taken,
        or when ``feedback.suppression(unless_suppressed)`` exists."""

    def check_ready(self) -> None:
        """Raise ``NotMigrated`` (saying how to migrate) unless the schema is current, and
        ``DbUnavailable`` if the database does not answer."""

    def migrate(self) -> str | None:
        """Bring the schema up to date (``newsletter-connector db upgrade``); optionally one
        line saying what it did, e.g. ``created`` or ``already current``."""

    def close(self) -> None:
        """Release connections."""


class StorageBase(Storage):
    """:class:`Storage`'s one-call shortcuts answered through :meth:`transaction`: a backend
    subclassing this implements ``transaction``, ``check_ready``, ``migrate`` and ``close``,
    and overrides a shortcut only to answer it faster, with the same result."""

    def find_active_api_key(self, key_digest: str) -> ApiKeyRecord | None:
        with self.transaction(write=False) as uow:
            return uow.keys.find_active_by_digest(key_digest)

    def find_active_connection(self) -> ConnectionRecord | None:
        with self.transaction(write=False) as uow:
            return uow.connections.active()

    def record_api_key_use(self, key_id: int, *, on: date) -> None:
        with self.transaction() as uow:
            uow.keys.mark_used(key_id, on=on)

    def add_subscriber(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        with self.transaction() as uow:
            if unless_suppressed is not None and uow.feedback.suppression(unless_suppressed):
                return None
            record = uow.subscribers.add(data)
            if record is not None:
                for event in events:
                    uow.outbox.enqueue(**vars(event))
        return record
