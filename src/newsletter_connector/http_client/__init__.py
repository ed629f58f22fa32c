"""The HTTP client every request to the mailing platform goes through (:func:`build_http_client`),
the sync runner's pushes and "Test connection" alike: who it trusts, and a total deadline per
request (:mod:`.deadline`).
"""

from __future__ import annotations

import http.cookiejar
import os
import ssl
from collections.abc import Callable
from typing import Any

import httpx

from ..settings import Settings
from ..tracing import tracer_for
from ..tracing.http_client import TracedTransport
from .deadline import DeadlinePoolTransport, WorkerDeadlineTransport

#: The total deadline of a request to the platform, in seconds (docs/delivery.md, "Requests and
#: the retry ladder").
REQUEST_DEADLINE_SECONDS = 15.0


def trusted_ssl_context(settings: Settings) -> ssl.SSLContext:
    """Verify the platform against the system CA store, ``SSL_CERT_FILE`` (and
    ``SSL_CERT_DIR``) when set, and ``settings.ca_bundle`` when set."""
    context = ssl.create_default_context()  # system store; OpenSSL honours SSL_CERT_FILE/DIR
    cert_file = os.environ.get("SSL_CERT_FILE")
    if cert_file and os.path.isfile(cert_file):
        context.load_verify_locations(cafile=cert_file)
    if settings.ca_bundle:
        context.load_verify_locations(cafile=settings.ca_bundle)
    return context


class CookiesNeverKept(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: a push never carries state a platform set."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        pass

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        pass


def build_http_client(
    settings: Settings,
    *,
    deadline: float = REQUEST_DEADLINE_SECONDS,
    inner: Callable[[], httpx.BaseTransport] | None = None,
) -> httpx.Client:
    """The :class:`httpx.Client` every outbound transport is given: no redirects, no cookies,
    nothing from the environment beyond :func:`trusted_ssl_context`, and a total ``deadline``
    per request (over it: :class:`httpx.TimeoutException`). ``inner`` builds the transport
    instead (tests: :class:`httpx.MockTransport`), run under :class:`WorkerDeadlineTransport`.
    With the ``tracing`` setting on, each request is a client span (:class:`TracedTransport`).
    """
    transport: httpx.BaseTransport
    if inner is None:
        transport = DeadlinePoolTransport(trusted_ssl_context(settings), deadline)
    else:
        transport = WorkerDeadlineTransport(inner(), deadline)
    tracer = tracer_for(settings)
    if tracer is not None:
        transport = TracedTransport(transport, tracer)
    return httpx.Client(
        transport=transport,
        cookies=CookiesNeverKept(),
        follow_redirects=False,
        timeout=httpx.Timeout(deadline),
        trust_env=False,
    )
