"""``{base_url}/metrics`` for Prometheus, and the middleware counting every request for it.

Both exist only when the ``metrics_token`` setting is set: without it the path is an unknown
path, and requests are not instrumented. The endpoint wants ``Authorization: Bearer <token>``
(compared in constant time); anything else is a 401 that says nothing more.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import time
from collections.abc import Mapping
from typing import Any

import falcon

from ..observability.exposition import (
    CONTENT_TYPE,
    MULTIPROC_ENV,
    bearer_matches,
    process_collector,
    render,
)
from ..observability.instruments import record_request
from ..observability.outbox_collector import OutboxCollector
from ..service import NewsletterService
from ..settings import Settings

METRICS = "/metrics"

_log = logging.getLogger(__name__)


def looks_like_a_worker(environ: Mapping[str, Any]) -> bool:
    """Whether the process answering ``environ`` is likely one of several workers of a server:
    a gunicorn worker serves it (the ``gunicorn.socket`` key its WSGI workers add; a master
    can always add workers), or the process was started by :mod:`multiprocessing` (as
    ``uvicorn --workers`` starts them). ``SERVER_SOFTWARE`` is no signal: falcon's test client
    says ``gunicorn`` too."""
    return "gunicorn.socket" in environ or multiprocessing.parent_process() is not None


@functools.cache
def warn_unsummed() -> None:
    """Log, once per process, that this worker's ``/metrics`` shows its own figures only."""
    _log.warning(
        "/metrics is served by a worker process but %s is not set: each scrape shows the "
        "figures of whichever worker answered, not their sum (docs/mounting/gunicorn.md)",
        MULTIPROC_ENV,
    )


class RequestMetricsMiddleware:
    """Times and counts each request by falcon's route template (never the raw path), method
    and status class; a 503 by ``req.context.unavailable_cause`` (set where the 503 is made)."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.metrics_started = time.perf_counter()

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        started = getattr(req.context, "metrics_started", None)
        if started is None:
            return
        record_request(
            req.uri_template,
            req.method,
            resp.status_code,
            time.perf_counter() - started,
            cause=getattr(req.context, "unavailable_cause", None),
        )


class MetricsResource:
    """The Prometheus text of the request and runner instruments (summed across gunicorn
    workers) and of the outbox, read from the database now."""

    def __init__(self, service: NewsletterService, token: str) -> None:
        self.token = token
        self.outbox = OutboxCollector(service)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.cache_control = ["no-store"]
        if not bearer_matches(req.get_header("Authorization"), self.token):
            resp.status = falcon.HTTP_401
            resp.content_type = falcon.MEDIA_TEXT
            resp.set_header("WWW-Authenticate", 'Bearer realm="metrics"')
            resp.text = "unauthorized\n"
            return
        if not os.environ.get(MULTIPROC_ENV) and looks_like_a_worker(req.env):
            warn_unsummed()
        resp.content_type = CONTENT_TYPE
        resp.data = render(process_collector(), self.outbox)

    on_head = on_get


def middleware(settings: Settings) -> list[RequestMetricsMiddleware]:
    """The middleware to put ahead of any that can refuse a request (so that every request is
    counted): one :class:`RequestMetricsMiddleware` with ``metrics_token`` set, none otherwise."""
    return [] if settings.metrics_token is None else [RequestMetricsMiddleware()]


def add_route(app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService) -> None:
    """With ``metrics_token`` set: serve ``/metrics``."""
    token = service.settings.metrics_token
    if token is not None:
        app.add_route(METRICS, MetricsResource(service, token.get_secret_value()))
