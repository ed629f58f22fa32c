"""A server span per request, named by its route template (:func:`tracing_middleware`).

Attributes follow the HTTP server semantic conventions, except that the request's own path
and query are never recorded: ``url.path``, ``url.query`` and ``url.full`` would carry the
link tokens of ``/confirm/<token>`` and the like, and addresses. A span says
``http.request.method``, ``http.route`` (the matched template under ``base_url``'s path, such
as ``/newsletter/confirm/{token}``), ``http.response.status_code``, ``url.scheme``,
``network.protocol.version``, ``server.address`` and ``server.port`` (from ``base_url``, not
from the request's headers) and, for a 5xx answer, ``error.type``. No header, cookie, client
address or user agent is recorded. The caller's trace context is taken from its headers by
the propagator the host configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import falcon

from ..settings import Settings
from ..tracing import http_method, http_span_name, mark_error, tracer_for

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

#: ``req.context`` key of the request's span and its context token.
_SPAN = "nc_tracing_span"
_DEFAULT_PORTS = {"https": 443, "http": 80}


def tracing_middleware(settings: Settings) -> list[TracingMiddleware]:
    """The middleware to add to the app: one :class:`TracingMiddleware` when the ``tracing``
    setting is on, none otherwise.

    :raises SettingsError: tracing is on but the OpenTelemetry API is not installed.
    """
    tracer = tracer_for(settings)
    return [] if tracer is None else [TracingMiddleware(tracer, settings.public_base_url)]


class TracingMiddleware:
    """Falcon middleware recording each request as a server span of ``tracer``, the current
    span while the request is handled (database statements are its children)."""

    def __init__(self, tracer: Tracer, base_url: str) -> None:
        self.tracer = tracer
        public = urlsplit(base_url)
        self.root = public.path.rstrip("/")
        self.server: dict[str, AttributeValue] = {
            "server.address": public.hostname or "",
            "server.port": public.port or _DEFAULT_PORTS.get(public.scheme, 443),
        }

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        from opentelemetry import context, propagate, trace

        method = http_method(req.method)
        attributes: dict[str, AttributeValue] = {
            "http.request.method": method,
            "url.scheme": req.scheme,
            **self.server,
        }
        protocol = str(req.env.get("SERVER_PROTOCOL", ""))
        if protocol.startswith("HTTP/"):
            attributes["network.protocol.version"] = protocol[len("HTTP/") :]
        carrier = {name.lower(): value for name, value in req.headers.items()}
        parent = propagate.extract(carrier)
        current = self.tracer.start_span(
            http_span_name(method),
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=attributes,
        )
        token = context.attach(trace.set_span_in_context(current, parent))
        req.context[_SPAN] = (current, token)

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        held = req.context.pop(_SPAN, None)
        if held is None:  # another middleware failed before ours began the span
            return
        from opentelemetry import context

        current, token = held
        try:
            method = http_method(req.method)
            template = req.uri_template
            if template is not None:
                route = self.root + template
                current.set_attribute("http.route", route)
                current.update_name(http_span_name(method, route))
            status = resp.status_code
            current.set_attribute("http.response.status_code", status)
            if status >= 500:
                mark_error(current, str(status))
        finally:
            current.end()
            context.detach(token)
