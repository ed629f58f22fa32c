"""The Jinja2 environment of the reader pages and how a page is written to a response.

Templates are looked up in ``settings.template_dir`` first (file by file), then in the package's
``templates/``; autoescaping is always on. Every page carries :data:`SECURITY_HEADERS`: no
caching, no ``Referer`` leaving with a token, no scripts, no framing, no indexing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import falcon
import jinja2

from ...links import CONTACT_PATH, SIGNUP_PATH
from ...settings import Settings, SettingsError

PACKAGE = "newsletter_connector.web.pages"
STYLESHEET_PATH = "/assets/reader.css"

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "X-Robots-Tag": "noindex, nofollow",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
}


def build_environment(settings: Settings) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if settings.template_dir:
        folder = Path(settings.template_dir)
        if not folder.is_dir():
            raise SettingsError(
                "setting template_dir (NEWSLETTER_TEMPLATE_DIR) is invalid: "
                f"{str(folder)!r} is not a folder"
            )
        loaders.append(jinja2.FileSystemLoader(str(folder)))
    loaders.append(jinja2.PackageLoader(PACKAGE, "templates"))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class PageRenderer:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.environment = build_environment(settings)
        self.environment.globals.update(self.globals())

    def globals(self) -> dict[str, Any]:
        """What every template may use: the site's name and links."""
        base = self.settings.public_base_url
        return {
            "site_name": self.settings.site_name,
            "site_url": self.settings.effective_site_url,
            "base_url": base,
            "postal_address": self.settings.postal_address,
            "stylesheet_url": base + STYLESHEET_PATH,
            "signup_url": base + SIGNUP_PATH,
            "contact_url": base + CONTACT_PATH,
        }

    def render(
        self,
        resp: falcon.Response,
        template: str,
        *,
        status: str = falcon.HTTP_200,
        **context: Any,
    ) -> None:
        resp.status = status
        resp.content_type = "text/html; charset=utf-8"
        for name, value in SECURITY_HEADERS.items():
            resp.set_header(name, value)
        resp.text = self.environment.get_template(template).render(**context)
