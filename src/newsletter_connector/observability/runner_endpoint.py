"""``sync --metrics-bind HOST:PORT``: the runner's own ``/metrics`` for Prometheus.

A runner is a process of its own, often on another host than the web workers, so it is a scrape
target of its own (docs/contributing/decisions/operations.md, "The sync runner is a scrape target of
its own"): the same bearer token as the app's endpoint, its batch and event counters only (the
outbox figures come from the app's endpoint, read from the shared database), and whether it
finds a platform connection (``newsletter_sync_connected``); none of the web workers' HTTP
series, which a runner never fills. It answers from the
runner's own registry, never from ``$PROMETHEUS_MULTIPROC_DIR``: a runner that inherited the web
workers' directory would otherwise report their HTTP series as its own, and the workers would sum
its counters too (docs/contributing/decisions/operations.md, "Health checks, metrics and logs").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from .exposition import CONTENT_TYPE, bearer_matches, render
from .instruments import SYNC_SERIES, instruments

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class _QuietHandler(WSGIRequestHandler):
    """No per-request line on stderr (it would not follow ``log_format``)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def metrics_app(token: str) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """A WSGI app answering ``GET /metrics`` with ``Authorization: Bearer <token>``; 401
    without the token, 404 on any other path."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        headers = [("Cache-Control", "no-store")]
        if environ.get("PATH_INFO") != "/metrics" or environ["REQUEST_METHOD"] not in (
            "GET",
            "HEAD",
        ):
            start_response("404 Not Found", [*headers, ("Content-Type", "text/plain")])
            return [b"not found\n"]
        if not bearer_matches(environ.get("HTTP_AUTHORIZATION"), token):
            start_response(
                "401 Unauthorized",
                [
                    *headers,
                    ("Content-Type", "text/plain"),
                    ("WWW-Authenticate", 'Bearer realm="metrics"'),
                ],
            )
            return [b"unauthorized\n"]
        body = render(instruments().registry.restricted_registry(SYNC_SERIES))
        start_response("200 OK", [*headers, ("Content-Type", CONTENT_TYPE)])
        return [body]

    return app


def parse_bind(bind: str) -> tuple[str, int]:
    """``host:port`` (an IPv4 address or a name) as a pair; :class:`ValueError` saying what is
    wrong."""
    host, _, port = bind.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"must be host:port, e.g. 127.0.0.1:9101, got {bind!r}")
    return host, int(port)


def serve_metrics(bind: str, token: str) -> WSGIServer:
    """Start serving the runner's metrics on ``bind`` on a daemon thread; ``shutdown()`` the
    returned server to stop. :raises OSError: the address cannot be listened on."""
    host, port = parse_bind(bind)
    server = make_server(host, port, metrics_app(token), handler_class=_QuietHandler)
    threading.Thread(
        target=server.serve_forever, name="newsletter-sync-metrics", daemon=True
    ).start()
    return server
