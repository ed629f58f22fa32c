"""A small host site that mounts newsletter-connector under ``/newsletter``.

The host owns ``/`` (its home page and its own signup view) and its own tables
(:mod:`.host_db`); it supplies two plugins: its subscriber store (:mod:`.host_store`,
subscribers live in ``host_users``) and its issue content (:mod:`.host_content`, digests built
from ``host_articles``). Everything under the prefix goes to the newsletter app, with the
prefix moved from ``PATH_INFO`` to ``SCRIPT_NAME`` as WSGI requires; the newsletter app's
``base_url`` names the public address of the mount point (it includes ``/newsletter``).
The sync runner runs beside it, on a background thread.

Run it from the repository root::

    export NEWSLETTER_DATABASE_URL=sqlite:///host.db
    export NEWSLETTER_BASE_URL=http://127.0.0.1:8080/newsletter
    export NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS=true  # local trial only; https in production
    python -m examples.wsgi_mount.host_site migrate   # our migrations + the host's tables
    python -m examples.wsgi_mount.host_site serve     # the site and the sync runner
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy import update

from newsletter_connector import Settings, create_app
from newsletter_connector.errors import ConsentRequired, InvalidRequest
from newsletter_connector.mounting import mount
from newsletter_connector.service import NewsletterService
from newsletter_connector.sync.background import BackgroundSync, start_background_sync

from . import host_store
from .host_content import HostContent
from .host_db import host_engine, host_users

PREFIX = "/newsletter"
MAX_FORM_BYTES = 10_000

SIGNUP_FORM = """<h1>Get our newsletter</h1>
<form method="post" action="/signup">
  <label>Email <input name="email" type="email" required></label>
  <label>Your name <input name="display_name"></label>
  <label>ZIP <input name="zip" inputmode="numeric"></label>
  <button>Sign up</button>
</form>"""


def host_settings(settings: Settings | None = None) -> Settings:
    """The host's newsletter settings: its own subscriber store, whatever else is configured."""
    settings = settings or Settings.load()
    return settings.model_copy(update={"storage_backend": "host"})


def migrate(settings: Settings | None = None) -> None:
    """Run the package's migrations and create the host's tables (``db upgrade`` for this host)."""
    service = NewsletterService.build(host_settings(settings), plugins=[host_store])
    try:
        service.initialise()
    finally:
        service.close()


class HostSite:
    """The host's WSGI application, with the newsletter app mounted under :data:`PREFIX`.

    ``service`` is the mounted app's :class:`NewsletterService` (host code calls it directly).
    """

    def __init__(self, settings: Settings | None = None) -> None:
        settings = host_settings(settings)
        self.engine = host_engine(settings.database_url)  # the host's own connections
        self.newsletter = create_app(settings, plugins=[host_store, HostContent(self.engine)])
        self.service: NewsletterService = self.newsletter.service
        self.application = mount(PREFIX, self.newsletter, self.pages)

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        return self.application(environ, start_response)

    def start_sync(self, **options: Any) -> BackgroundSync:
        """Start the sync runner beside the site (call ``stop()`` on the result at exit)."""
        return start_background_sync(self.service, **options)

    def close(self) -> None:
        self.service.close()
        self.engine.dispose()

    # -- the host's own pages ------------------------------------------------------------------

    def pages(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", "/"), environ.get("REQUEST_METHOD", "GET")
        if path == "/" and method in ("GET", "HEAD"):
            body = '<h1>Host home</h1><a href="/signup">Get our newsletter</a>'
            return _page(start_response, "200 OK", body)
        if path == "/signup" and method in ("GET", "HEAD"):
            return _page(start_response, "200 OK", SIGNUP_FORM)
        if path == "/signup" and method == "POST":
            return self.signup(environ, start_response)
        return _page(start_response, "404 Not Found", "<h1>Not found</h1>")

    def signup(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        """The host's signup view: the newsletter signup, then the host's own column.

        The platform mails the confirmation link (the ``newsletter.signup`` event carries it);
        the page only says so. A bad field answers 400 naming it, and stores nothing.
        """
        form = _read_form(environ)
        body: dict[str, Any] = {"email": form.get("email", "")}
        if form.get("zip"):
            body["zip"] = form["zip"]
        try:
            result = self.service.subscribers.subscribe(body)
        except (InvalidRequest, ConsentRequired) as exc:
            field = getattr(exc, "field", None) or "form"
            message = html.escape(f"{field}: {exc.message}")
            return _page(start_response, "400 Bad Request", f"<p>{message}</p>{SIGNUP_FORM}")
        name = form.get("display_name", "").strip()[:200]
        if result.created and name:
            with self.engine.begin() as connection:
                connection.execute(
                    update(host_users)
                    .where(host_users.c.id == result.record.id)
                    .values(display_name=name)
                )
        return _page(
            start_response,
            "200 OK",
            "<h1>Almost done</h1><p>Look for our email and click its link to confirm.</p>",
        )


def _read_form(environ: dict[str, Any]) -> dict[str, str]:
    try:
        length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_FORM_BYTES)
    except ValueError:
        length = 0
    raw = environ["wsgi.input"].read(length) if length > 0 else b""
    parsed = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[0] for name, values in parsed.items()}


def _page(start_response: Callable[..., Any], status: str, body: str) -> list[bytes]:
    start_response(status, [("Content-Type", "text/html; charset=utf-8")])
    return [f"<!doctype html><title>Host</title>{body}".encode()]


def make_site(settings: Settings | None = None) -> HostSite:
    """The host site with the newsletter app mounted under ``/newsletter``."""
    return HostSite(settings)


def main(argv: list[str]) -> None:
    """``migrate``, or ``serve`` (the default) on 127.0.0.1:$HOST_SITE_PORT (8080), with the
    sync runner polling every $HOST_SITE_POLL_INTERVAL seconds (5)."""
    command = argv[1] if len(argv) > 1 else "serve"
    if command == "migrate":
        migrate()
        return
    import os
    from wsgiref.simple_server import make_server

    site = make_site()
    sync = site.start_sync(poll_interval=float(os.environ.get("HOST_SITE_POLL_INTERVAL", "5")))
    try:
        port = int(os.environ.get("HOST_SITE_PORT", "8080"))
        make_server("127.0.0.1", port, site).serve_forever()
    finally:
        sync.stop()
        site.close()


if __name__ == "__main__":
    main(sys.argv)
