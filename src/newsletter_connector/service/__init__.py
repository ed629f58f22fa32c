"""``NewsletterService``: every business rule, for the web surfaces, the CLI and host code.
It knows no HTTP (it raises :mod:`newsletter_connector.errors`); each operation runs in one
storage transaction with the outbox events it causes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import pluggy

from ..errors import DbUnavailable
from ..plugin_manager import build_plugin_manager, pick, storage_backends
from ..settings import Settings
from ..storage import Storage
from ..timeutil import utcnow
from .admin import AdminService, IssuedKey
from .analytics import AnalyticsService
from .context import ServiceContext
from .feedback import FeedbackService
from .issues import IssueService
from .listsource import ListSourceService
from .messages import ContactMessageService
from .subscribers import SubscriberService

__all__ = ["IssuedKey", "NewsletterService", "ServiceContext"]

log = logging.getLogger(__name__)


class NewsletterService:
    """The service facade: one sub-service per concern, sharing one :class:`ServiceContext`."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context
        self.admin = AdminService(context)
        self.listsource = ListSourceService(context)
        self.issues = IssueService(context)
        self.subscribers = SubscriberService(context)
        self.feedback = FeedbackService(context, self.subscribers)
        self.messages = ContactMessageService(context)
        self.analytics = AnalyticsService(context)

    @classmethod
    def build(
        cls,
        settings: Settings | None = None,
        *,
        plugins: Iterable[Any] = (),
        plugin_manager: pluggy.PluginManager | None = None,
        storage: Storage | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> NewsletterService:
        """Assemble a service: plugins (the installed ones, then ``plugins``), then
        ``storage`` or the backend named in settings (default :meth:`Settings.load`); raises
        :class:`SettingsError` or :class:`PluginNotFound` (no such storage backend)."""
        settings = settings or Settings.load()
        pm = plugin_manager or build_plugin_manager(plugins)
        if storage is None:
            backend = pick("storage backend", storage_backends(pm), settings.storage_backend)
            storage = backend.factory(settings)
        return cls(ServiceContext(settings, storage, pm, clock))

    @property
    def settings(self) -> Settings:
        return self.context.settings

    @property
    def storage(self) -> Storage:
        return self.context.storage

    def __repr__(self) -> str:
        return f"NewsletterService({self.context!r})"

    def check_ready(self, *, tolerate_outage: bool = True) -> None:
        """Fail fast on an un-migrated database (``NotMigrated``); with ``tolerate_outage`` a
        database that does not answer is only logged (requests answer 503 until it is back)."""
        try:
            self.storage.check_ready()
            # Created inside a signup's write transaction, it would deadlock SQLite's one writer.
            _ = self.context.site_secret
        except DbUnavailable:
            if not tolerate_outage:
                raise
            log.warning("database unavailable at start-up; requests will answer 503 until it is")

    def initialise(self) -> str | None:
        """Migrate the schema and make sure a site secret exists (``db upgrade``); what the
        storage's :meth:`~newsletter_connector.storage.Storage.migrate` says it did."""
        done = self.storage.migrate()
        _ = self.context.site_secret
        return done

    def close(self) -> None:
        self.storage.close()
