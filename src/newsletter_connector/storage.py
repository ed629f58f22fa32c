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
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


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
        """Store one event and return its id (ids grow with insertion order). Records the
        visitor's first sighting at ``occurred_at`` unless the visitor was already seen."""

    def events_after(self, after_id: int, limit: int) -> list[AnalyticsEventRecord]:
        """At most ``limit`` events with id strictly greater than ``after_id``, by id."""

    def daily_traffic(
        self, start: datetime, end: datetime, *, top_pages: int
    ) -> dict[str, DayTraffic]:
        """Per UTC day (``YYYY-MM-DD``) in ``[start, end)``, the day's aggregates; days without
        any event, visitor or issue may be absent. ``top_pages`` bounds each day's top list,
        ordered by views descending then path ascending. ``issues`` counts issues recorded
        that day (kind ``test`` excluded)."""


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
        """Record ``job_key`` as run; true if this call claimed it, false if it already was.

        Safe under concurrency: of several transactions racing, exactly one gets true."""

    def latest(self, prefix: str) -> str | None:
        """The greatest claimed key starting with ``prefix`` (string order), or ``None``."""


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
    def analytics(self) -> AnalyticsRepository: ...

    @property
    def llm_usage(self) -> LlmUsageRepository: ...

    @property
    def jobs(self) -> JobRunsRepository: ...


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
