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

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import falcon

from ..settings import Settings
from ..tracing import error_type, http_method, http_span_name, mark_error, tracer_for

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer
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
        streamed = False
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
            stream = resp.stream
            sent = req.method != "HEAD" and status >= 200 and status not in (204, 304)
            if sent and stream is not None and not hasattr(stream, "read"):
                resp.stream = TracedBody(stream, current, context.get_current())
                streamed = True
        finally:
            if not streamed:
                current.end()
            context.detach(token)


class TracedBody:
    """A streamed body (an iterable of chunks read after the responder returned, such as the
    subscribers' CSV export) producing each chunk with the request's span current, so the
    statements it runs are the request's; the span ends when the server closes the body."""

    def __init__(self, body: Iterable[bytes], current: Span, within: Context) -> None:
        self.chunks = iter(body)
        self.body = body
        self.current = current
        self.within = within
        self.ended = False

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        from opentelemetry import context

        token = context.attach(self.within)
        try:
            return next(self.chunks)
        except StopIteration:
            raise
        except BaseException as exc:
            mark_error(self.current, error_type(exc))
            raise
        finally:
            context.detach(token)

    def close(self) -> None:
        """Close the body (as the WSGI server does after sending it), then end the span."""
        try:
            close = getattr(self.body, "close", None)
            if callable(close):
                close()
        finally:
            if not self.ended:
                self.ended = True
                self.current.end()
