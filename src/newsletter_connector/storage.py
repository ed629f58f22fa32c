"""The storage contract: what every backend (the built-in SQL store or a host's own) provides.

A backend is a :class:`Storage`. All work happens inside ``storage.transaction()``, a unit of
work that commits on success and rolls back on any exception, exposing small repositories.
Every state change and the outbox events it causes are written in one such transaction.

Backends raise :class:`~newsletter_connector.errors.DbUnavailable` when the database does not
answer and :class:`~newsletter_connector.errors.NotMigrated` when its schema is missing or old.
The conformance suite in :mod:`newsletter_connector.testing` checks a backend against this file.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class ApiKeyRecord:
    """A Newsletter API key as stored: never the key itself, only its SHA-256 digest."""

    id: int
    label: str
    key_prefix: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class ConnectionRecord:
    """The operator-configured connection to the mailing platform.

    ``repr`` leaves the token out, so logging a connection never leaks it.
    """

    id: int
    platform_base: str
    transport: str
    token: str
    created_at: datetime
    disabled_at: datetime | None

    def __repr__(self) -> str:
        return (
            f"ConnectionRecord(id={self.id}, platform_base={self.platform_base!r}, "
            f"transport={self.transport!r}, token=<hidden>, disabled_at={self.disabled_at!r})"
        )


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
    left out of ``repr``, as is the phone number.
    """

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
class DeletionRecord:
    """Evidence of an erasure: a keyed hash of the address, never the address itself."""

    id: int
    email_hmac: str
    previous_status: str
    deleted_at: datetime
    discarded_events: int


@dataclass(frozen=True)
class ContactMessageRecord:
    """One contact-form message, as received."""

    id: int
    email: str
    name: str | None
    message: str
    submitted_at: datetime


class ApiKeyRepository(Protocol):
    """Newsletter API keys, looked up by the SHA-256 hex digest of the presented key."""

    def add(self, *, label: str, key_prefix: str, key_digest: str, created_at: datetime) -> int:
        """Store a new key and return its id. Raises ``InvalidRequest`` if the label is taken."""

    def find_active_by_digest(self, key_digest: str) -> ApiKeyRecord | None:
        """The unrevoked key with this digest, or ``None``."""

    def list(self) -> list[ApiKeyRecord]:
        """Every key, revoked ones included, oldest first."""

    def revoke(self, label_or_id: str, *, at: datetime) -> ApiKeyRecord | None:
        """Revoke the key with this label (or numeric id); ``None`` when none matches.

        Revoking an already revoked key keeps its first revocation time.
        """


class SettingsRepository(Protocol):
    """Small JSON values stored by name (site secret, list-source credentials, ...)."""

    def get(self, name: str) -> Any | None:
        """The stored value, or ``None``."""

    def put(self, name: str, value: Any, *, at: datetime) -> None:
        """Store ``value`` under ``name``, replacing any previous value."""

    def put_if_absent(self, name: str, value: Any, *, at: datetime) -> Any:
        """Store ``value`` unless ``name`` exists; return the value that is stored now.

        Safe under concurrency: two callers racing get the same winner.
        """

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


class OutboxRepository(Protocol):
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
        """Queue one event (not yet in any batch). ``subscriber_key`` is the keyed hash of the
        address the payload carries, or ``None`` for events that carry no address."""

    def discard_for_subscriber(self, subscriber_key: str) -> int:
        """Erase every stored event carrying this subscriber's address, delivered or not.

        :return: how many of them had not been delivered yet (discarded from the queue).
        """


TokenKind = Literal["confirm", "unsubscribe", "profile"]


class SubscriberRepository(Protocol):
    """The subscriber list. A host may supply its own store by implementing this (and the
    deletion repository); ``testing.conformance_subscribers`` checks it.

    Emails passed in are already normalised (lowercase). Ids grow with creation order, and a
    subscriber added later always gets a larger id than every one already visible to readers,
    so keyset walks on id never skip or repeat anyone.
    """

    def add(self, data: SubscriberData) -> SubscriberRecord | None:
        """Store a new subscriber and return it with its id; ``None`` (and nothing stored) when
        the address is already taken, also when a concurrent transaction just took it."""

    def get_by_email(self, email: str, *, lock: bool = False) -> SubscriberRecord | None:
        """The subscriber with this address, or ``None``.

        :param lock: hold a row lock until the transaction ends (for read-modify-write).
        """

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
        """Up to ``limit`` subscribers with id greater than ``after_id`` (all when ``None``),
        in id order, only those with ``status`` when given. Keyset, never OFFSET."""


class DeletionRepository(Protocol):
    """Erasure evidence."""

    def add(
        self, *, email_hmac: str, previous_status: str, deleted_at: datetime, discarded_events: int
    ) -> DeletionRecord:
        """Record an erasure."""

    def find(self, email_hmac: str) -> list[DeletionRecord]:
        """Every erasure of the address with this keyed hash, oldest first."""


class ContactMessageRepository(Protocol):
    """The contact-form log: every message its own row, in arrival order."""

    def add(
        self, *, email: str, name: str | None, message: str, submitted_at: datetime
    ) -> ContactMessageRecord:
        """Append a message; ids grow with arrival order."""

    def list_page(self, *, after_id: int | None, limit: int) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages with id greater than ``after_id``, in id order."""


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
    def subscribers(self) -> SubscriberRepository: ...

    @property
    def deletions(self) -> DeletionRepository: ...

    @property
    def messages(self) -> ContactMessageRepository: ...


class Storage(Protocol):
    """A storage backend."""

    def transaction(self, *, write: bool = True) -> AbstractContextManager[UnitOfWork]:
        """Open a unit of work; commit when the block ends, roll back if it raises.

        :param write: false for read-only work, which a backend may run with lighter locking.
        """

    def check_ready(self) -> None:
        """Raise ``NotMigrated`` (saying how to migrate) unless the schema is current, and
        ``DbUnavailable`` if the database does not answer."""

    def migrate(self) -> None:
        """Bring the schema up to date (``newsletter-connector db upgrade``)."""

    def close(self) -> None:
        """Release connections."""
