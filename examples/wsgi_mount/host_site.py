"""A small host site that mounts newsletter-connector under ``/newsletter``.

The host owns ``/`` (its own pages); everything under the prefix goes to the newsletter app,
with the prefix moved from ``PATH_INFO`` to ``SCRIPT_NAME`` as WSGI requires. The newsletter
app's ``base_url`` names the public address of the mount point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from newsletter_connector import Settings, create_app
from newsletter_connector.mounting import mount

PREFIX = "/newsletter"


def host_pages(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """The host's own site: a home page linking to the newsletter signup."""
    if environ.get("PATH_INFO", "/") != "/":
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found"]
    body = f'<h1>Host home</h1><a href="{PREFIX}/signup">Get our newsletter</a>'.encode()
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [body]


def make_site(settings: Settings | None = None) -> Callable[..., Iterable[bytes]]:
    """The host site with the newsletter app mounted under ``/newsletter``."""
    newsletter = create_app(settings)
    return mount(PREFIX, newsletter, host_pages)


if __name__ == "__main__":  # pragma: no cover - manual run
    from wsgiref.simple_server import make_server

    make_server("127.0.0.1", 8080, make_site()).serve_forever()
