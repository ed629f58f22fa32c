"""``/admin/assets/admin.css``: the admin area's stylesheet, served from the package."""

from __future__ import annotations

from importlib import resources

import falcon

from .base import AdminPages


class AdminStylesheet:
    """The stylesheet (like every admin address, the unknown-path 404 while unconfigured:
    :mod:`.off`)."""

    def __init__(self, pages: AdminPages) -> None:
        self._pages = pages
        static = resources.files(__package__).joinpath("static")
        self._css = static.joinpath("admin.css").read_bytes()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/css; charset=utf-8"
        resp.set_header("Cache-Control", "public, max-age=3600")
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.data = self._css
