"""The admin area's routes, relative to the app (prefix them with ``base_url`` for links)."""

from __future__ import annotations

ROOT = "/admin"
HOME = "/admin/"
LOGIN = "/admin/login"
LOGOUT = "/admin/logout"
API_KEYS = "/admin/settings/api-keys"
ANALYTICS = "/admin/analytics"
STYLESHEET = "/admin/assets/admin.css"
