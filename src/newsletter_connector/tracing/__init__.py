"""Optional OpenTelemetry spans, on the tracer provider the host configured.

With the ``tracing`` setting ``off`` (the default) nothing here imports OpenTelemetry: every
caller holds ``None`` for its tracer and :func:`span` is a no-op. With ``on``,
:func:`tracer_for` hands out a tracer of the global provider (``opentelemetry-api``, the
``otel`` extra); the package never configures a provider or an exporter itself.

What goes into a span follows the project's redaction rules (:mod:`..log_redaction`): no raw
path, query string, header value, bound parameter, exception message, email address, token,
API key or credential. Exceptions are never recorded as span events (their messages may
quote input); a failure is told by ``error.type``, the exception's class name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

from ..settings import ENV_PREFIX, Settings, SettingsError

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer
    from opentelemetry.util.types import AttributeValue

#: The instrumentation scope every span of the package is recorded under.
INSTRUMENTATION_NAME = "newsletter_connector"
#: Where an operator reads how to turn tracing on and export the spans.
TRACING_DOCS = "docs/operations.md#tracing"

SpanKindName = Literal["internal", "server", "client"]


def tracer_for(settings: Settings) -> Tracer | None:
    """The package's tracer when the ``tracing`` setting is ``on``, else ``None`` (and nothing
    is imported).

    :raises SettingsError: ``on`` while ``opentelemetry-api`` is not installed, naming the
        setting and the extra to install.
    """
    if settings.tracing != "on":
        return None
    try:
        from opentelemetry import trace
    except ImportError:
        raise SettingsError(
            f"setting tracing ({ENV_PREFIX}TRACING) is on, but the OpenTelemetry API is not "
            "installed; install the otel extra (pip install 'newsletter-connector[otel]') or "
            f"set it to off (see {TRACING_DOCS})"
        ) from None
    return trace.get_tracer(INSTRUMENTATION_NAME, _package_version())


def _package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("newsletter-connector")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return None


@contextmanager
def span(
    tracer: Tracer | None,
    name: str,
    attributes: Mapping[str, AttributeValue] | None = None,
    *,
    kind: SpanKindName = "internal",
) -> Iterator[Span | None]:
    """A span named ``name`` as the current span for the block (``None`` without a tracer).

    An exception leaving the block marks the span as an error with ``error.type`` (its class
    name) and no event: the exception's message is not recorded.
    """
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    kinds = {"internal": SpanKind.INTERNAL, "server": SpanKind.SERVER, "client": SpanKind.CLIENT}
    with tracer.start_as_current_span(
        name,
        kind=kinds[kind],
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            mark_error(current, error_type(exc))
            raise


def mark_error(current: Span, kind: str) -> None:
    """Mark ``current`` as failed, ``error.type`` being ``kind`` (a class name or status code);
    the status carries no description."""
    from opentelemetry.trace import StatusCode

    current.set_attribute("error.type", kind)
    current.set_status(StatusCode.ERROR)


def error_type(exc: BaseException) -> str:
    """``error.type`` for ``exc``: its fully qualified class name, never its message."""
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


#: The HTTP methods the semantic conventions name; any other is recorded as ``_OTHER``.
KNOWN_METHODS = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)


def http_method(method: str) -> str:
    """``http.request.method``: ``method`` when it is a known one, else ``_OTHER`` (the
    original is not recorded: a client chooses it freely)."""
    return method if method in KNOWN_METHODS else "_OTHER"


def http_span_name(method: str, target: str | None = None) -> str:
    """An HTTP span's name: ``{method} {target}``, ``{method}`` without a target, ``HTTP`` for
    a method that is not a known one."""
    if method == "_OTHER":
        return "HTTP"
    return f"{method} {target}" if target else method
