"""Recording the package's spans in tests: the SDK's in-memory exporter behind the global tracer
provider (set once per process, as a host sets it once), and readers of what was recorded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_EXPORTER = InMemorySpanExporter()
_PROVIDER: list[TracerProvider] = []


def _install() -> None:
    if not _PROVIDER:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
        _PROVIDER.append(provider)


def recorded_spans() -> Iterator[InMemorySpanExporter]:
    """For a test module's ``spans`` fixture: the exporter every finished span goes to,
    emptied before and after the test."""
    _install()
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def named(recorded: Any, name: str) -> list[ReadableSpan]:
    """The finished spans called ``name``, in the order they ended."""
    return [s for s in recorded.get_finished_spans() if s.name == name]


def children(recorded: Any, parent: ReadableSpan) -> list[ReadableSpan]:
    """The finished spans whose parent is ``parent``."""
    assert parent.context is not None
    return [
        s
        for s in recorded.get_finished_spans()
        if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]


def statement_spans(recorded: Any) -> list[ReadableSpan]:
    """The database statement spans (those with ``db.system.name``)."""
    return [s for s in recorded.get_finished_spans() if "db.system.name" in (s.attributes or {})]


def everything_said(span: ReadableSpan) -> list[str]:
    """Every text a span carries: its name, status description, attribute keys and values,
    its events' names and attributes, its links' attributes, and its resource's attributes."""
    texts = [span.name, span.status.description or ""]

    def add(attributes: Any) -> None:
        for key, value in dict(attributes or {}).items():
            texts.append(str(key))
            texts.extend(str(v) for v in (value if isinstance(value, tuple) else (value,)))

    add(span.attributes)
    for event in span.events:
        texts.append(event.name)
        add(event.attributes)
    for link in span.links:
        add(link.attributes)
    add(span.resource.attributes)
    return texts


def traced_storage(settings: Any) -> Iterator[Any]:
    """For a test module's ``newsletter_storage`` fixture: the ``sql`` store built from
    ``settings`` (so its statements are traced when ``settings.tracing`` is on), emptied and
    closed after the test."""
    from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
    from newsletter_connector.testing.databases import empty_all_tables

    storage = BuiltinSqlStorage.from_settings(settings)
    try:
        yield storage
    finally:
        empty_all_tables(storage.engine)
        storage.close()
