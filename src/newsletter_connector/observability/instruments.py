"""The counters and histograms the app and the sync runner update, created on first use.

Label values come from small fixed sets only (falcon's route templates, a known method, a
status class, an error code, a batch result), never from a raw path, a header or a body, so no
token or address can reach a label and the number of series stays bounded.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

#: Methods counted under their own name; any other is counted as ``other``.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: The route label of a request no route matched (its path is never a label).
UNMATCHED_ROUTE = "unmatched"


@dataclass(frozen=True)
class Instruments:
    """Every instrument, registered in ``registry`` (this process's own figures)."""

    registry: CollectorRegistry
    requests: Counter
    duration: Histogram
    unavailable: Counter
    rate_limited: Counter
    sync_batches: Counter
    sync_events: Counter
    sync_connected: Gauge


_creating = threading.Lock()


def instruments() -> Instruments:
    """The process's instruments, created (and ``prometheus_client`` imported) on first call."""
    with _creating:  # two threads' first requests must not make two sets
        return _instruments()


@functools.cache
def _instruments() -> Instruments:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

    registry = CollectorRegistry(auto_describe=True)
    request_labels = ("route", "method", "status_class")
    return Instruments(
        registry=registry,
        requests=Counter(
            "newsletter_http_requests",
            "HTTP requests answered, by route template, method and status class.",
            request_labels,
            registry=registry,
        ),
        duration=Histogram(
            "newsletter_http_request_duration_seconds",
            "Time to answer an HTTP request, by route template, method and status class.",
            request_labels,
            registry=registry,
        ),
        unavailable=Counter(
            "newsletter_http_unavailable",
            "Requests answered 503, by cause (db_unavailable, not_migrated, other).",
            ("cause",),
            registry=registry,
        ),
        rate_limited=Counter(
            "newsletter_http_rate_limited",
            "Requests answered 429 (over a per-client limit), by route template.",
            ("route",),
            registry=registry,
        ),
        sync_batches=Counter(
            "newsletter_sync_batches",
            "Batches the sync runner sent, by result (delivered, retry, failed).",
            ("result",),
            registry=registry,
        ),
        sync_events=Counter(
            "newsletter_sync_events",
            "Events in the batches the sync runner sent, by result (delivered, retry, failed).",
            ("result",),
            registry=registry,
        ),
        sync_connected=Gauge(
            "newsletter_sync_connected",
            "1 while the sync runner finds a platform connection configured; 0 while none is "
            "(events stay queued).",
            registry=registry,
            multiprocess_mode="livemax",
        ),
    )


#: The series of the sync runner's own ``/metrics`` (the HTTP ones are the web workers').
SYNC_SERIES = (
    "newsletter_sync_batches_total",
    "newsletter_sync_batches_created",
    "newsletter_sync_events_total",
    "newsletter_sync_events_created",
    "newsletter_sync_connected",
)


def status_class(status_code: int) -> str:
    """``2xx`` ... ``5xx`` for an HTTP status code (``other`` outside 100-599)."""
    return f"{status_code // 100}xx" if 100 <= status_code <= 599 else "other"


def record_request(
    route: str | None, method: str, status_code: int, seconds: float, *, cause: str | None
) -> None:
    """Count one answered request; ``cause`` labels a 503 (``other`` when unknown)."""
    found = instruments()
    labels = (
        route or UNMATCHED_ROUTE,
        method if method in KNOWN_METHODS else "other",
        status_class(status_code),
    )
    found.requests.labels(*labels).inc()
    found.duration.labels(*labels).observe(seconds)
    if status_code == 503:
        found.unavailable.labels(cause or "other").inc()
    elif status_code == 429:
        found.rate_limited.labels(labels[0]).inc()


def record_connected(connected: bool) -> None:
    """Set whether the sync runner's last loop found a platform connection."""
    instruments().sync_connected.set(1 if connected else 0)


def record_outcomes(outcomes: Iterable[Any]) -> None:
    """Count the sync runner's batch outcomes (objects with ``result`` and ``events``)."""
    found = instruments()
    for outcome in outcomes:
        found.sync_batches.labels(outcome.result).inc()
        found.sync_events.labels(outcome.result).inc(outcome.events)
