"""The admin area's routes, relative to the app (prefix them with ``base_url`` for links)."""

from __future__ import annotations

ROOT = "/admin"
HOME = "/admin/"
LOGIN = "/admin/login"
LOGOUT = "/admin/logout"
API_KEYS = "/admin/settings/api-keys"
SUBSCRIBERS = "/admin/subscribers"
SUBSCRIBER = "/admin/subscribers/show"
SUBSCRIBER_UNSUBSCRIBE = "/admin/subscribers/unsubscribe"
SUBSCRIBER_BOUNCE = "/admin/subscribers/bounce"
SUBSCRIBER_ERASE = "/admin/subscribers/erase"
SUBSCRIBERS_EXPORT = "/admin/subscribers/export"
MESSAGES = "/admin/messages"
ISSUES = "/admin/issues"
ISSUES_TEST_DIGEST = "/admin/issues/test-digest"
STYLESHEET = "/admin/assets/admin.css"
