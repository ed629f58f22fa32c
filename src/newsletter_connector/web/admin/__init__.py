"""The admin area under ``{base_url}/admin``: one module per page, sharing :class:`AdminPages`
(the gate, the CSRF check, the renderer), behind one door deciding who may enter
(:mod:`.door`); every act is a row of :data:`.acts.ACTS`, served by :class:`.act.ActResource`.

While it is not configured (no admin user and no ``newsletter_admin_user`` host hook) every
admin address answers the app's 404 for an unknown path. See docs/admin.md.
"""

from __future__ import annotations

import falcon

from ...service import NewsletterService
from ...service.cursors import MAX_ID
from . import (
    analytics,
    audit,
    dashboard,
    imports,
    issues,
    login,
    messages,
    outbox_failed,
    settings,
    subscriber,
    subscriber_jobs,
    subscribers,
)
from .act import ActResource
from .acts import ACTS
from .assets import AdminStylesheet
from .base import AdminPages
from .door import AdminDoorMiddleware, AdminUnknownPages
from .gate import OutsideRole
from .input import AdminInputMiddleware, AdminInputRefused
from .paths import (
    ANALYTICS,
    AUDIT,
    HOME,
    IMPORTS,
    ISSUES,
    LOGIN,
    MESSAGES,
    OUTBOX_FAILED,
    ROOT,
    SETTINGS,
    STYLESHEET,
    SUBSCRIBER,
    SUBSCRIBER_JOBS,
    SUBSCRIBERS,
)

__all__ = ["AdminPages", "add_routes"]

#: A bulk job's progress page; a larger id names no job: the 404, never a query.
JOB = SUBSCRIBER_JOBS + f"/{{job_id:int(min=1, max={MAX_ID})}}"
#: An import's page, likewise.
IMPORT = IMPORTS + f"/{{job_id:int(min=1, max={MAX_ID})}}"


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService
) -> AdminPages:
    """Mount the admin pages on ``app``, and the middleware keeping them off until configured
    and closed to signed-out visitors."""
    pages = AdminPages(service)
    app.add_middleware(AdminDoorMiddleware(pages.gate))
    unknown_pages = AdminUnknownPages(pages.gate)
    app.add_sink(unknown_pages, unknown_pages.pattern)
    app.add_middleware(AdminInputMiddleware())
    app.add_error_handler(AdminInputRefused, pages.input_refused)
    app.add_error_handler(OutsideRole, pages.outside_role)
    app.add_route(ROOT, dashboard.DashboardPage(pages))
    app.add_route(HOME, dashboard.DashboardPage(pages))
    app.add_route(LOGIN, login.LoginPage(pages))
    app.add_route(SUBSCRIBERS, subscribers.SubscribersPage(pages))
    app.add_route(SUBSCRIBER, subscriber.SubscriberPage(pages))
    app.add_route(SUBSCRIBER_JOBS, subscriber_jobs.SubscriberJobsPage(pages))
    app.add_route(JOB, subscriber_jobs.SubscriberJobPage(pages))
    app.add_route(IMPORTS, imports.ImportsPage(pages))
    app.add_route(IMPORT, imports.ImportPage(pages))
    app.add_route(MESSAGES, messages.MessagesPage(pages))
    # A larger id names no issue: the 404, never a query (SQLite raises on it).
    preview = ISSUES + f"/{{issue_id:int(min=1, max={MAX_ID})}}/preview"
    app.add_route(preview, issues.IssuePreview(pages))
    app.add_route(ISSUES, issues.IssuesPage(pages))
    app.add_route(ANALYTICS, analytics.AnalyticsPage(pages))
    app.add_route(SETTINGS, settings.SettingsPage(pages))
    app.add_route(OUTBOX_FAILED, outbox_failed.FailedBatchesPage(pages))
    app.add_route(AUDIT, audit.AuditPage(pages))
    app.add_route(STYLESHEET, AdminStylesheet(pages))
    for act in ACTS:
        app.add_route(act.path, ActResource(pages, act))
    return pages
