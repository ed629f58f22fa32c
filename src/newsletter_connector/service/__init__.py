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

from ..errors import DbUnavailable, DbUnreachable, PluginNotFound
from ..plugin_manager import (
    blocked_plugins_hint,
    build_plugin_manager,
    issue_renderers,
    outbound_transports,
    pick,
    pick_setting,
    storage_backends,
)
from ..plugins.sql_store.builtin import BuiltinSqlStorage
from ..plugins.sql_store.store import SqlStorage
from ..settings import Settings
from ..timeutil import utcnow
from .admin import AdminService, IssuedKey
from .admin_access import AdminAccessService
from .admin_audit import AdminAuditService
from .analytics import AnalyticsService
from .context import ServiceContext
from .dashboard import DashboardService
from .feedback import FeedbackService
from .importing import ImportJobService, SubscriberImportService
from .issues import IssueService
from .jobs import JobService
from .listsource import ListSourceService
from .messages import ContactMessageService
from .runner_status import RunnerStatusService
from .subscriber_bulk import SubscriberBulkService
from .subscriber_jobs import SubscriberJobService
from .subscriber_list import SubscriberListService
from .subscribers import SubscriberService

__all__ = ["IssuedKey", "NewsletterService", "ServiceContext"]

log = logging.getLogger(__name__)


class NewsletterService:
    """The service facade: one sub-service per concern, sharing one :class:`ServiceContext`."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context
        self.admin = AdminService(context)
        self.admin_audit = AdminAuditService(context)
        self.admin_access = AdminAccessService(context, self.admin_audit)
        self.listsource = ListSourceService(context)
        self.issues = IssueService(context)
        self.subscribers = SubscriberService(context)
        self.subscriber_list = SubscriberListService(context)
        self.subscriber_bulk = SubscriberBulkService(self.subscribers)
        self.jobs = JobService(context)
        self.subscriber_jobs = SubscriberJobService(self.subscriber_bulk, self.jobs)
        self.subscriber_import = SubscriberImportService(self.subscribers)
        self.import_jobs = ImportJobService(self.subscriber_import, self.jobs)
        self.feedback = FeedbackService(context, self.subscribers)
        self.messages = ContactMessageService(context)
        self.analytics = AnalyticsService(context)
        self.dashboard = DashboardService(context)
        self.runner_status = RunnerStatusService(context)

    @classmethod
    def build(
        cls,
        settings: Settings | None = None,
        *,
        plugins: Iterable[Any] = (),
        plugin_manager: pluggy.PluginManager | None = None,
        storage: SqlStorage | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> NewsletterService:
        """Assemble a service: plugins (the installed ones, then ``plugins``), then
        ``storage`` (used as it is) or the built-in store on the settings (default
        :meth:`Settings.load`), its subscribers in the storage backend that
        ``storage_backend`` names; raises :class:`SettingsError` or :class:`PluginNotFound`
        (no storage backend of that name)."""
        settings = settings or Settings.load()
        pm = plugin_manager or build_plugin_manager(plugins, settings=settings)
        if storage is None:
            store = pick_setting(
                "storage backend", storage_backends(pm), settings, "storage_backend"
            )
            storage = BuiltinSqlStorage.from_settings(settings, subscriber_store=store)
        return cls(ServiceContext(settings, storage, pm, clock))

    @property
    def settings(self) -> Settings:
        return self.context.settings

    @property
    def storage(self) -> SqlStorage:
        return self.context.storage

    def __repr__(self) -> str:
        return f"NewsletterService({self.context!r})"

    def check_plugins(self, *, connection: bool = False) -> None:
        """Fail at start-up rather than at first use when a named plugin is not installed: the
        issue renderer of ``settings.issue_renderer`` and, with ``connection`` (the sync
        runner), the outbound transport of the active platform connection. The storage
        backend is checked by :meth:`build`.

        :raises PluginNotFound: naming the setting and where its value came from (or the
            connection), and the plugins that are available.
        """
        pm = self.context.plugins
        pick_setting("issue renderer", issue_renderers(pm), self.settings, "issue_renderer")
        if not connection:
            return
        record = self.admin.connection()
        if record is not None:
            try:
                pick("outbound transport", outbound_transports(pm), record.transport)
            except PluginNotFound as exc:
                raise PluginNotFound(
                    f"the platform connection: {exc.message} (install it, or choose another "
                    "with `newsletter-connector connection set --transport`)"
                    + blocked_plugins_hint(self.settings)
                ) from None

    def check_ready(self, *, tolerate_outage: bool = True) -> None:
        """Fail fast on an un-migrated database (``NotMigrated``) and on one that cannot be
        used (:class:`DbUnreachable`, its message the driver's reason, the URL's password
        masked). With ``tolerate_outage`` (the app starting up in a worker) a failure waiting
        may cure (a refused connection, no reply) is only logged, with its reason: requests
        answer 503 until the database is back; a wrong password, database name or host is
        raised all the same."""
        try:
            self.storage.check_ready()
            # Created inside a signup's write transaction, it would deadlock SQLite's one writer.
            _ = self.context.site_secret
        except DbUnavailable as exc:
            reason = exc.reason or exc.message
            if tolerate_outage and not exc.lasting:
                log.warning(
                    "database unavailable at start-up (%s); requests will answer 503 until it is",
                    reason,
                )
                return
            raise DbUnreachable(
                f"cannot use the database: {reason}", reason=exc.reason, lasting=exc.lasting
            ) from exc

    def initialise(self) -> str | None:
        """Migrate the schema and make sure a site secret exists (``db upgrade``); what the
        storage's :meth:`.SqlStorage.migrate` says it did."""
        done = self.storage.migrate()
        _ = self.context.site_secret
        return done

    def close(self) -> None:
        self.storage.close()
