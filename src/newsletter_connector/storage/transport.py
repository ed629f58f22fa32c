"""The outbound transport contract (hook ``newsletter_outbound_transports``; guide and tested
example: docs/plugins.md).

``descriptor.factory(connection, http_client)`` returns a :class:`Transport` for one connection.
``http_client`` is the runner's :class:`httpx.Client`
(:func:`~newsletter_connector.http_client.build_http_client`: trusted CAs, no redirects, a total
deadline per request raising :class:`httpx.TimeoutException`); a transport sends through it
only, with its public API, to URLs under ``connection.platform_base`` with the connection's
bearer token. An optional ``configure(settings)`` is called once, before the first ``deliver``.
Whether "Test connection" can try a connection is the descriptor's ``check_path``.

``deliver(events)`` gets one frozen batch (at most ``max_batch_size`` events, oldest first),
outside any transaction. It returns only when the platform accepted every event (2xx), else
raises (:class:`DeliveryError` or any exception); retrying the whole batch with the same event
ids, and settling it, belong to the runner.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .outbox_records import OutboxEvent

#: An ingest batch holds at most 100 events (docs/delivery.md, "events: batches to /v1/events").
MAX_BATCH_SIZE = 100
#: A bearer token an HTTP header can carry: printable ASCII without spaces.
_HEADER_TOKEN = re.compile(r"[\x21-\x7e]+")


class DeliveryError(Exception):
    """The platform did not accept a delivery. The message is stored as the batch's
    ``last_error``: it must never contain the token or a contact's data."""


@runtime_checkable
class Transport(Protocol):
    """One connection's way of pushing events."""

    #: The most events one batch may hold for this transport (<= :data:`MAX_BATCH_SIZE`).
    max_batch_size: int
    #: How many HTTP requests a full batch takes at most (1 when batched, else one per
    #: event); the runner's lease covers that many deadlines.
    max_requests_per_batch: int

    def deliver(self, events: Sequence[OutboxEvent]) -> None:
        """Push ``events``; return only when all were accepted, raise otherwise."""


def header_safe_token(token: str) -> bool:
    """Whether ``token`` can travel in an ``Authorization`` header (printable ASCII, 0x21-0x7E):
    any other character makes building the request fail."""
    return _HEADER_TOKEN.fullmatch(token) is not None


def bearer_headers(token: str, *, idempotency_key: str | None = None) -> dict[str, str]:
    """The headers every push carries: the bearer token and JSON content."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return headers


class _Path(Protocol):
    @property
    def path(self) -> str: ...


class _Request(Protocol):
    @property
    def method(self) -> str: ...

    @property
    def url(self) -> _Path: ...


class _Answer(Protocol):
    """What :func:`require_2xx` reads of a response (an :class:`httpx.Response` is one)."""

    @property
    def status_code(self) -> int: ...

    @property
    def request(self) -> _Request: ...


def require_2xx(response: _Answer) -> None:
    """Raise :class:`DeliveryError` naming the status unless ``response`` is a 2xx (a redirect
    fails too). The response body is never quoted: it may echo contact data."""
    if not 200 <= response.status_code < 300:
        request = response.request
        raise DeliveryError(f"HTTP {response.status_code} from {request.method} {request.url.path}")
