"""``/assets/reader.css``; a ``reader.css`` in ``settings.template_dir`` replaces the built-in."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import falcon

from ...settings import Settings

STYLESHEET = "reader.css"


def load_stylesheet(settings: Settings) -> bytes:
    """The host's ``reader.css`` when its template folder has one, else the built-in."""
    if settings.template_dir:
        override = Path(settings.template_dir) / STYLESHEET
        if override.is_file():
            return override.read_bytes()
    return resources.files(__package__).joinpath("static").joinpath(STYLESHEET).read_bytes()


class StylesheetResource:
    def __init__(self, settings: Settings) -> None:
        self._css = load_stylesheet(settings)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/css; charset=utf-8"
        resp.set_header("Cache-Control", "public, max-age=3600")
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.data = self._css
