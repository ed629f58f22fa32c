"""The admin area's routes, relative to the app (prefix them with ``base_url`` for links)."""

from __future__ import annotations

ROOT = "/admin"
HOME = "/admin/"
LOGIN = "/admin/login"
LOGOUT = "/admin/logout"
API_KEYS = "/admin/settings/api-keys"
SETTINGS = "/admin/settings"
LISTSOURCE = "/admin/settings/list-source"
LISTSOURCE_OFF = "/admin/settings/list-source/off"
OUTBOX_RETRY = "/admin/settings/outbox/retry-now"
OUTBOX_REPLAY = "/admin/settings/outbox/replay"
CONNECTION = "/admin/settings/connection"
CONNECTION_DISABLE = "/admin/settings/connection/disable"
CONNECTION_TEST = "/admin/settings/connection/test"
AUDIT = "/admin/audit"
STYLESHEET = "/admin/assets/admin.css"
