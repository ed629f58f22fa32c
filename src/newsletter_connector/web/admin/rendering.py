"""The admin pages' Jinja2 environment (the package's ``templates/``, autoescaped) and how a
page is written: the reader pages' security headers (no caching, no framing, no scripts)."""

from __future__ import annotations

from typing import Any

import falcon
import jinja2

from ..pages.rendering import SECURITY_HEADERS
from .paths import (
    ADMIN_USERS,
    ANALYTICS,
    API_KEYS,
    AUDIT,
    CONNECTION,
    HOME,
    ISSUES,
    LOGOUT,
    MESSAGES,
    SETTINGS,
    STYLESHEET,
    SUBSCRIBERS,
)
from .roles import may_use

#: The navigation of the shared layout: (section, label, path); the home page lists every
#: page by section (``None``: the home page itself). A new page adds itself here.
NAVIGATION = (
    (None, "Dashboard", HOME),
    ("People", "Subscribers", SUBSCRIBERS),
    ("People", "Contact messages", MESSAGES),
    ("Newsletter", "Issues", ISSUES),
    ("Reports", "Analytics", ANALYTICS),
    ("Settings", "API keys", API_KEYS),
    ("Settings", "List source and outbox", SETTINGS),
    ("Settings", "Platform connection", CONNECTION),
    ("Settings", "Admin users", ADMIN_USERS),
    ("Activity", "Audit log", AUDIT),
)


class AdminRenderer:
    """Renders admin templates with the links every page uses."""

    def __init__(self, base_url: str, site_name: str) -> None:
        self.environment = jinja2.Environment(
            loader=jinja2.PackageLoader(__package__, "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.environment.globals.update(
            site_name=site_name,
            stylesheet_url=base_url + STYLESHEET,
            home_url=base_url + HOME,
            logout_url=base_url + LOGOUT,
        )
        self.base_url = base_url

    def navigation(self, admin: Any) -> list[tuple[str | None, str, str]]:
        """:data:`NAVIGATION` as (section, label, address): the pages ``admin``'s role may use
        (none for a visitor)."""
        if admin is None:
            return []
        return [
            (section, label, self.base_url + path)
            for section, label, path in NAVIGATION
            if may_use(admin.role, path)
        ]

    def render(
        self, resp: falcon.Response, template: str, *, status: str = falcon.HTTP_200, **context: Any
    ) -> None:
        resp.status = status
        resp.content_type = "text/html; charset=utf-8"
        for name, value in SECURITY_HEADERS.items():
            resp.set_header(name, value)
        context.setdefault("admin", None)
        context["navigation"] = self.navigation(context["admin"])
        context.setdefault("flash", None)
        context.setdefault("current", None)
        resp.text = self.environment.get_template(template).render(**context)
