"""``/admin``: the admin area's home (the dashboard's place), linking to every page."""

from __future__ import annotations

import falcon

from .base import AdminPages


class HomePage:
    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        self.pages.show(req, resp, admin, "home.html", current="Dashboard")
