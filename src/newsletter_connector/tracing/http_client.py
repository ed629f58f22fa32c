"""A client span per request the sync runner sends to the platform (:class:`TracedTransport`).

Attributes follow the HTTP client semantic conventions: ``http.request.method``,
``server.address``, ``server.port``, ``url.scheme``, ``url.full`` (redacted as a logged URL
is: no query string, user info, link token or email address), ``http.response.status_code``
and ``error.type``. No header is recorded: the bearer token and idempotency keys stay out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from ..log_redaction import redact_url
from . import http_method, http_span_name, mark_error, span

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

_DEFAULT_PORTS = {"https": 443, "http": 80}


class TracedTransport(httpx.BaseTransport):
    """``inner`` with each request in a client span of ``tracer`` (a response of 400 or more,
    or an exception, marks it as an error)."""

    def __init__(self, inner: httpx.BaseTransport, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        method = http_method(request.method)
        with span(
            self.tracer, http_span_name(method), request_attributes(request), kind="client"
        ) as current:
            response = self.inner.handle_request(request)
            if current is not None:
                current.set_attribute("http.response.status_code", response.status_code)
                if response.status_code >= 400:
                    mark_error(current, str(response.status_code))
            return response

    def close(self) -> None:
        self.inner.close()


def request_attributes(request: httpx.Request) -> dict[str, AttributeValue]:
    """The span attributes known before ``request`` is sent."""
    url = request.url
    scheme = url.scheme
    return {
        "http.request.method": http_method(request.method),
        "server.address": url.host,
        "server.port": url.port or _DEFAULT_PORTS.get(scheme, 443),
        "url.scheme": scheme,
        "url.full": redact_url(str(url)),
    }
