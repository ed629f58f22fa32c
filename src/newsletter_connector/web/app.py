"""``create_app``: one falcon WSGI app with the three surfaces and the reader pages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import falcon
import falcon.media

from .. import json_encoding
from ..service import NewsletterService
from ..settings import Settings
from . import (
    analytics_capture,
    errors,
    export,
    health,
    issues_api,
    listsource,
    metrics,
    newsletter_api,
    openapi,
    subscribers_api,
    unknown_paths,
)
from .admin import add_routes as add_admin_pages
from .admin.gate import HostSignInRequired
from .canonical_path import CanonicalPathMiddleware
from .no_store import NoStoreMiddleware
from .pages import add_routes as add_reader_pages
from .pages.rendering import ReaderLanguage
from .paths import EXPORT, LISTSOURCE, NEWSLETTER_API
from .tracing import tracing_middleware


class NewsletterApp(falcon.App[falcon.Request, falcon.Response]):
    """The falcon app, carrying the :class:`NewsletterService` it serves as ``app.service``."""

    service: NewsletterService


def create_app(
    settings: Settings | None = None,
    *,
    plugins: Iterable[Any] = (),
    service: NewsletterService | None = None,
) -> NewsletterApp:
    """Build the WSGI app, mountable under any prefix (``base_url`` names the mount point).

    :param settings: defaults to :meth:`Settings.load`.
    :param plugins: plugin objects registered after the installed ones.
    :param service: a ready service (then ``settings`` and ``plugins`` are ignored).
    :raises SettingsError: a setting is invalid, ``base_url`` is not https while
        ``allow_insecure_http_links`` is off, or ``tracing`` is on without the OpenTelemetry
        API installed.
    :raises NotMigrated: the database has not been migrated.
    :raises PluginNotFound: the storage backend or issue renderer a setting names is not
        installed.
    """
    service = service or NewsletterService.build(settings, plugins=plugins)
    service.settings.require_https_links()  # fail now, naming the setting
    service.check_plugins()
    service.check_ready()
    # Tracing and metrics first: a path refused before routing still gets its span and count.
    app = NewsletterApp(
        middleware=[
            *tracing_middleware(service.settings),
            *metrics.middleware(service.settings),
            CanonicalPathMiddleware(),
            NoStoreMiddleware(),
            ReaderLanguage(),
        ]
    )
    app.service = service
    metrics.add_route(app, service)
    handler = falcon.media.JSONHandler(dumps=json_encoding.dumps, loads=json_encoding.loads)
    app.req_options.media_handlers[falcon.MEDIA_JSON] = handler
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = handler
    app.req_options.strip_url_path_trailing_slash = False
    pages = add_reader_pages(app, service)
    unknown_paths.add_sink(app, service)  # first, so tried last
    newsletter_api.add_routes(app, service, NEWSLETTER_API)
    listsource.add_routes(app, service, LISTSOURCE)
    issues_api.add_routes(app, service, NEWSLETTER_API)
    subscribers_api.add_routes(app, service, NEWSLETTER_API)
    openapi.add_routes(app, NEWSLETTER_API)
    export.add_routes(app, service, EXPORT)
    analytics_capture.add_routes(app, service)
    health.add_routes(app, service)
    admin = add_admin_pages(app, service)
    app.add_error_handler(HostSignInRequired, admin.host_sign_in_required)

    def error_page(req: falcon.Request, resp: falcon.Response, status: str, message: str) -> None:
        """A signed-in admin's error in the admin layout; anyone else's in the site's."""
        if not admin.error_page(req, resp, status, message):
            pages.error_page(req, resp, status)

    errors.install(app, html_page=error_page)
    return app
