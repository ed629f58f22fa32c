"""One transaction's repositories (:class:`UnitOfWork`) and the backend (:class:`Storage`).

All work happens inside ``storage.transaction()``, a unit of work that commits on success and
rolls back on any exception, exposing small repositories. Every state change and the outbox
events it causes are written in one such transaction. :class:`StorageBase` answers the few
one-call shortcuts of :class:`Storage` through a unit of work, so a backend implements only the
repositories and the lifecycle methods. Backends raise
:class:`~newsletter_connector.errors.DbUnavailable` when the database does not answer and
:class:`~newsletter_connector.errors.NotMigrated` when its schema is missing or old."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import date
from typing import Protocol

from .access_records import ApiKeyRecord, ConnectionRecord
from .admin import (
    AdminAuditRepository,
    AdminSessionRepository,
    AdminUserRepository,
    MessageHandlingRepository,
)
from .analytics import AnalyticsRepository, DayRollupRepository, LlmUsageRepository
from .bulk_jobs import BulkJobRepository
from .host import SubscriberRepository
from .import_jobs import ImportJobRepository
from .internal import (
    ApiKeyRepository,
    ConnectionRepository,
    ContactMessageRepository,
    DeletionRepository,
    FeedbackRepository,
    IssueRepository,
    JobRunsRepository,
    RateLimitRepository,
    SettingsRepository,
)
from .outbox import OutboxRepository
from .outbox_records import NewEvent
from .records import SubscriberData, SubscriberRecord


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

    @property
    def message_handling(self) -> MessageHandlingRepository: ...

    @property
    def bulk_jobs(self) -> BulkJobRepository: ...

    @property
    def import_jobs(self) -> ImportJobRepository: ...


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
