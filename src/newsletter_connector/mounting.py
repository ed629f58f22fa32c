"""Mounting the app inside another WSGI site, without extra dependencies (what werkzeug's
``DispatcherMiddleware`` does)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def mount(prefix: str, mounted: WSGIApp, fallback: WSGIApp) -> WSGIApp:
    """A WSGI app routing ``prefix`` and everything below it to ``mounted`` (the prefix moved from
    ``PATH_INFO`` to ``SCRIPT_NAME``), the rest to ``fallback``.

    :raises ValueError: the prefix does not start with ``/`` or ends with one.
    """
    if not prefix.startswith("/") or prefix.endswith("/"):
        raise ValueError("prefix must start with '/' and must not end with '/'")

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == prefix or path.startswith(prefix + "/"):
            environ = dict(environ)
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
            environ["PATH_INFO"] = path[len(prefix) :]
            return mounted(environ, start_response)
        return fallback(environ, start_response)

    return dispatch
