"""The admin area under ``{base_url}/admin``: one module per page, sharing :class:`AdminPages`
(the gate deciding who may enter, the CSRF check, the renderer and the admin-act helper).

While it is not configured (no admin user and no ``newsletter_admin_user`` host hook) every
admin address answers the app's 404 for an unknown path. See docs/admin.md.
"""

from __future__ import annotations

import falcon

from ...service import NewsletterService
from ...service.cursors import MAX_ID
from . import (
    admin_users,
    analytics,
    api_keys,
    audit,
    connection,
    dashboard,
    issues,
    login,
    messages,
    outbox_failed,
    settings,
    subscribers,
)
from .assets import AdminStylesheet
from .base import AdminPages
from .door import AdminDoorMiddleware, AdminUnknownPages
from .input import AdminInputMiddleware, AdminInputRefused
from .paths import (
    ADMIN_USER_DELETE,
    ADMIN_USERS,
    ANALYTICS,
    API_KEYS,
    AUDIT,
    CONNECTION,
    CONNECTION_DISABLE,
    CONNECTION_TEST,
    HOME,
    ISSUES,
    ISSUES_DIGEST,
    LISTSOURCE,
    LISTSOURCE_OFF,
    LOGIN,
    LOGOUT,
    MESSAGES,
    OUTBOX_FAILED,
    OUTBOX_FAILED_REPLAY,
    OUTBOX_REPLAY,
    OUTBOX_RETRY,
    ROOT,
    SETTINGS,
    STYLESHEET,
    SUBSCRIBER,
    SUBSCRIBER_BOUNCE,
    SUBSCRIBER_ERASE,
    SUBSCRIBER_UNSUBSCRIBE,
    SUBSCRIBERS,
    SUBSCRIBERS_EXPORT,
)

__all__ = ["AdminPages", "add_routes"]


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
    app.add_route(ROOT, dashboard.DashboardPage(pages))
    app.add_route(HOME, dashboard.DashboardPage(pages))
    app.add_route(LOGIN, login.LoginPage(pages))
    app.add_route(LOGOUT, login.LogoutAction(pages))
    app.add_route(API_KEYS, api_keys.ApiKeysPage(pages))
    app.add_route(API_KEYS + "/{key_id}/revoke", api_keys.RevokePage(pages))
    app.add_route(SUBSCRIBERS, subscribers.SubscribersPage(pages))
    app.add_route(SUBSCRIBER, subscribers.SubscriberPage(pages))
    app.add_route(SUBSCRIBER_UNSUBSCRIBE, subscribers.StatusAction(pages, act="unsubscribe"))
    app.add_route(SUBSCRIBER_BOUNCE, subscribers.StatusAction(pages, act="bounce"))
    app.add_route(SUBSCRIBER_ERASE, subscribers.ErasePage(pages))
    app.add_route(SUBSCRIBERS_EXPORT, subscribers.ExportAction(pages))
    app.add_route(MESSAGES, messages.MessagesPage(pages))
    # A larger id names no issue: the 404, never a query (SQLite raises on it).
    preview = ISSUES + f"/{{issue_id:int(min=1, max={MAX_ID})}}/preview"
    app.add_route(preview, issues.IssuePreview(pages))
    issues_page = issues.IssuesPage(pages)
    app.add_route(ISSUES, issues_page)
    app.add_route(ISSUES_DIGEST, issues.RecordDigest(issues_page))
    app.add_route(ANALYTICS, analytics.AnalyticsPage(pages))
    settings_page = settings.SettingsPage(pages)
    app.add_route(SETTINGS, settings_page)
    app.add_route(LISTSOURCE, settings.ListSourceAction(settings_page))
    app.add_route(LISTSOURCE_OFF, settings.ListSourceOffAction(settings_page))
    app.add_route(OUTBOX_RETRY, settings.OutboxRetryAction(settings_page))
    app.add_route(OUTBOX_REPLAY, settings.OutboxReplayAction(settings_page))
    failed_page = outbox_failed.FailedBatchesPage(pages)
    app.add_route(OUTBOX_FAILED, failed_page)
    app.add_route(OUTBOX_FAILED_REPLAY, outbox_failed.ReplayBatchAction(failed_page))
    connection_page = connection.ConnectionPage(pages)
    app.add_route(CONNECTION, connection_page)
    app.add_route(CONNECTION_DISABLE, connection.DisableConnectionAction(connection_page))
    app.add_route(CONNECTION_TEST, connection.TestConnectionAction(connection_page))
    users_page = admin_users.AdminUsersPage(pages)
    app.add_route(ADMIN_USERS, users_page)
    app.add_route(ADMIN_USER_DELETE, admin_users.DeleteAdminUserPage(users_page))
    app.add_route(AUDIT, audit.AuditPage(pages))
    app.add_route(STYLESHEET, AdminStylesheet(pages))
    return pages
