"""A small host site that mounts newsletter-connector under ``/newsletter``.

The host owns ``/`` (its own pages); everything under the prefix goes to the newsletter app,
with the prefix moved from ``PATH_INFO`` to ``SCRIPT_NAME`` as WSGI requires. The newsletter
app's ``base_url`` names the public address of the mount point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from newsletter_connector import Settings, create_app

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
PREFIX = "/newsletter"


def host_pages(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """The host's own site: a home page linking to the newsletter signup."""
    if environ.get("PATH_INFO", "/") != "/":
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found"]
    body = f'<h1>Host home</h1><a href="{PREFIX}/signup">Get our newsletter</a>'.encode()
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [body]


def mount(prefix: str, mounted: WSGIApp, fallback: WSGIApp) -> WSGIApp:
    """Send requests under ``prefix`` to ``mounted``, the rest to ``fallback``."""

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == prefix or path.startswith(prefix + "/"):
            environ = dict(environ)
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
            environ["PATH_INFO"] = path[len(prefix) :]
            return mounted(environ, start_response)
        return fallback(environ, start_response)

    return dispatch


def make_site(settings: Settings | None = None) -> WSGIApp:
    """The host site with the newsletter app mounted under ``/newsletter``."""
    newsletter = create_app(settings)
    return mount(PREFIX, newsletter, host_pages)


if __name__ == "__main__":  # pragma: no cover - manual run
    from wsgiref.simple_server import make_server

    make_server("127.0.0.1", 8080, make_site()).serve_forever()
