"""OpenTelemetry spans of the sync runner: one per loop, per step and per push to the platform,
recorded with the SDK's in-memory exporter (the platform is an httpx.MockTransport)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from newsletter_connector.service import NewsletterService
from newsletter_connector.sync.runner import SyncRunner
from tests.support.tracing import (
    children,
    everything_said,
    named,
    recorded_spans,
    statement_spans,
    traced_storage,
)
from tests.sync.test_sync_runner import PLATFORM, TOKEN, Recorder, connect, queue


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from recorded_spans()


@pytest.fixture
def newsletter_settings(newsletter_settings: Any) -> Any:
    return newsletter_settings.model_copy(update={"tracing": "on"})


@pytest.fixture
def newsletter_storage(newsletter_settings: Any) -> Iterator[Any]:
    yield from traced_storage(newsletter_settings)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def runner_for(service: Any, recorder: Recorder, **options: Any) -> SyncRunner:
    return SyncRunner(service, http_transport=lambda: httpx.MockTransport(recorder), **options)


def test_a_loop_is_a_trace_of_its_steps_and_pushes(
    newsletter_service: Any, recorder: Recorder, spans: Any
) -> None:
    connect(newsletter_service)
    queue(newsletter_service, 3, email="pushed@example.org")
    runner = runner_for(newsletter_service, recorder)
    spans.clear()
    assert runner.run_once().delivered_events == 3
    [run] = named(spans, "newsletter.sync.run")
    assert run.parent is None
    assert dict(run.attributes or {}) == {
        "newsletter.sync.connected": True,
        "newsletter.sync.delivered_events": 3,
    }
    steps = [s.name for s in children(spans, run) if "db.system.name" not in (s.attributes or {})]
    assert steps[:7] == [
        "newsletter.sync.periodic",
        "newsletter.sync.periodic",
        "newsletter.sync.periodic",
        "newsletter.sync.periodic",
        "newsletter.sync.periodic",
        "newsletter.sync.release_leases",
        "newsletter.sync.prune",
    ]
    # the first claim; the next, on the helper thread while the batch is sent (so in either
    # order with the delivery); the last, which settles the sent batch and finds nothing more
    assert sorted(steps[7:]) == [
        "newsletter.sync.claim",
        "newsletter.sync.claim",
        "newsletter.sync.claim",
        "newsletter.sync.deliver",
    ]
    claims = named(spans, "newsletter.sync.claim")
    assert all(c.parent == run.context for c in claims)
    figures = sorted(
        (
            (c.attributes or {})["newsletter.sync.settled_batches"],
            (c.attributes or {})["newsletter.sync.claimed_batches"],
            (c.attributes or {})["newsletter.sync.released_batches"],
        )
        for c in claims
    )
    assert figures == [(0, 0, 0), (0, 1, 0), (1, 0, 0)]
    assert all(statement_spans(spans) and children(spans, c) for c in claims)
    periodic = [
        (s.attributes or {})["code.function.name"] for s in named(spans, "newsletter.sync.periodic")
    ]
    assert periodic == [
        "newsletter_connector.service.runner_status.RunnerStatusService.beat",
        "newsletter_connector.service.analytics.AnalyticsService.queue_completed_day_rollups",
        "newsletter_connector.service.analytics.AnalyticsService.keep_settled_rollups",
        "newsletter_connector.service.subscriber_jobs.SubscriberJobService.work",
        "newsletter_connector.service.importing._jobs.ImportJobService.work",
    ]
    [deliver] = named(spans, "newsletter.sync.deliver")
    assert (deliver.attributes or {})["newsletter.sync.events"] == 3
    [push] = children(spans, deliver)
    assert push.name == "POST" and push.kind is SpanKind.CLIENT
    assert dict(push.attributes or {}) == {
        "http.request.method": "POST",
        "server.address": "platform.example.test",
        "server.port": 443,
        "url.scheme": "https",
        "url.full": f"{PLATFORM}/v1/events",
        "http.response.status_code": 200,
    }
    assert push.status.status_code is StatusCode.UNSET
    for span in spans.get_finished_spans():
        for text in everything_said(span):
            assert TOKEN not in text and "pushed@example.org" not in text, (span.name, text)


def test_a_refused_push_marks_the_push_and_the_delivery(
    newsletter_service: Any, recorder: Recorder, spans: Any
) -> None:
    connect(newsletter_service)
    queue(newsletter_service, 1)
    recorder.script = [500]
    runner_for(newsletter_service, recorder).run_once()
    [deliver] = named(spans, "newsletter.sync.deliver")
    [push] = children(spans, deliver)
    assert (push.attributes or {})["http.response.status_code"] == 500
    assert (push.attributes or {})["error.type"] == "500"
    assert push.status.status_code is StatusCode.ERROR
    assert (deliver.attributes or {})["error.type"] == (
        "newsletter_connector.storage.transport.DeliveryError"
    )
    assert deliver.status.status_code is StatusCode.ERROR and not deliver.status.description
    assert deliver.events == () and push.events == ()


def test_an_unreachable_platform_marks_the_push_with_the_exception_class(
    newsletter_service: Any, recorder: Recorder, spans: Any
) -> None:
    connect(newsletter_service)
    queue(newsletter_service, 1)
    recorder.script = [httpx.ConnectError(f"refused for Bearer {TOKEN}")]
    runner_for(newsletter_service, recorder).run_once()
    [push] = named(spans, "POST")
    assert (push.attributes or {})["error.type"] == "httpx.ConnectError"
    assert "http.response.status_code" not in (push.attributes or {})
    assert not any(TOKEN in text for text in everything_said(push))


def test_a_failing_periodic_task_marks_its_span_and_the_loop_goes_on(
    newsletter_service: Any, recorder: Recorder, spans: Any
) -> None:
    def failing(_now: Any) -> None:
        raise RuntimeError("task failed for someone@example.org")

    runner = runner_for(newsletter_service, recorder, periodic_tasks=[failing])
    assert runner.run_once().task_errors == 1
    [task] = named(spans, "newsletter.sync.periodic")
    assert (task.attributes or {})["error.type"] == "RuntimeError"
    assert (task.attributes or {})["code.function.name"].endswith(  # type: ignore[union-attr]
        "test_a_failing_periodic_task_marks_its_span_and_the_loop_goes_on.<locals>.failing"
    )
    assert task.events == () and not task.status.description
    [run] = named(spans, "newsletter.sync.run")
    assert run.status.status_code is StatusCode.UNSET


def test_with_tracing_off_the_runner_records_nothing(
    newsletter_settings: Any, newsletter_storage: Any, recorder: Recorder, spans: Any
) -> None:
    off = newsletter_settings.model_copy(update={"tracing": "off"})
    service = NewsletterService.build(off, storage=newsletter_storage)
    connect(service)
    queue(service, 1)
    spans.clear()
    assert runner_for(service, recorder).run_once().delivered_events == 1
    # the store was built traced: only its statements are recorded, nothing of the runner's
    recorded = spans.get_finished_spans()
    assert recorded and statement_spans(spans) == list(recorded)
