"""The Jinja2 environments of the reader pages (one per language) and how a page is written to
a response.

Templates are looked up in ``settings.template_dir`` first (file by file), then in the package's
``templates/``; autoescaping is always on, and text is translated by the language's catalog
(:mod:`newsletter_connector.i18n`). Every page carries :data:`SECURITY_HEADERS`: no caching, no
``Referer`` leaving with a token, no scripts, no framing, no indexing.
"""

from __future__ import annotations

import gettext
from pathlib import Path
from typing import Any

import falcon
import jinja2

from ...i18n import Languages
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


def build_environment(
    settings: Settings, translations: gettext.NullTranslations | None = None
) -> jinja2.Environment:
    """The pages' environment, its text translated by ``translations`` (none: as written)."""
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
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    environment.policies["ext.i18n.trimmed"] = True
    catalog = translations or gettext.NullTranslations()
    environment.install_gettext_translations(catalog, newstyle=True)  # type: ignore[attr-defined]
    # ``_()`` marks its translation safe (it is the catalog's markup); text made elsewhere (a
    # label, a notice) goes through ``t()``, whose plain string autoescaping escapes.
    environment.globals["t"] = catalog.gettext
    return environment


class PageRenderer:
    """Renders a page in the language its reader is shown (:meth:`Languages.for_reader`)."""

    def __init__(self, settings: Settings, languages: Languages | None = None) -> None:
        self.settings = settings
        self.languages = languages or Languages.of(settings)
        self._environments: dict[str, jinja2.Environment] = {}
        self.environment(self.languages.language)  # a bad template_dir fails at start

    def environment(self, language: str) -> jinja2.Environment:
        """The environment of ``language`` (an installed one), made on first use."""
        if language not in self._environments:
            environment = build_environment(
                settings=self.settings, translations=self.languages.translations(language)
            )
            environment.globals.update(self.globals(), lang=language.replace("_", "-"))
            self._environments[language] = environment
        return self._environments[language]

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
        """Write ``template`` to ``resp`` in the reader's language (from the
        ``Accept-Language`` :class:`ReaderLanguage` kept on ``resp.context``)."""
        resp.status = status
        resp.content_type = "text/html; charset=utf-8"
        for name, value in SECURITY_HEADERS.items():
            resp.set_header(name, value)
        resp.set_header("Content-Language", self.language_of(resp).replace("_", "-"))
        if self.settings.language_from_browser:
            resp.append_header("Vary", "Accept-Language")
        environment = self.environment(self.language_of(resp))
        resp.text = environment.get_template(template).render(**context)

    def language_of(self, resp: falcon.Response) -> str:
        """The language ``resp`` is written in."""
        return self.languages.for_reader(getattr(resp.context, ACCEPT_LANGUAGE, None))


#: Where :class:`ReaderLanguage` keeps the request's ``Accept-Language`` on ``resp.context``.
ACCEPT_LANGUAGE = "accept_language"


class ReaderLanguage:
    """Falcon middleware keeping each request's ``Accept-Language`` beside its response, for
    the page (or error page) it gets to be written in the reader's language."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        setattr(resp.context, ACCEPT_LANGUAGE, req.get_header("Accept-Language"))
