"""The outbound transport contract, implemented by plugins through the hook
``newsletter_outbound_transports`` (descriptor
:class:`~newsletter_connector.descriptors.OutboundTransport`).

``descriptor.factory(connection, http_client)`` returns a :class:`Transport` for one
connection; built-in and plugin transports are built the same way. ``http_client`` is a plain
:class:`httpx.Client` prepared by the runner (:func:`~.http.build_http_client`): it trusts the
configured CAs, never follows redirects and enforces the 15-second total deadline on every
request (a request over it raises :class:`httpx.TimeoutException`). A transport must send
through that client only, with its public API, to URLs under ``connection.platform_base``,
with the connection's bearer token.

The runner calls ``deliver`` with one frozen batch (at most ``max_batch_size`` events, oldest
first) outside any database transaction. ``deliver`` returns normally only when the platform has
accepted every event (a 2xx); otherwise it raises (:class:`DeliveryError` or any exception),
and the whole batch is retried later with the same event ids: retries, and settling the batch
in the store, belong to the runner. A transport needing settings may define
``configure(settings)``; the runner calls it once, before the first ``deliver``. The contract
for plugin authors, with a tested example, is in docs/plugins.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import httpx

from ..storage import OutboxEvent

#: SPEC section 8: an ingest batch holds at most 100 events.
MAX_BATCH_SIZE = 100


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


def bearer_headers(token: str, *, idempotency_key: str | None = None) -> dict[str, str]:
    """The headers every push carries: the bearer token and JSON content."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return headers


def require_2xx(response: httpx.Response) -> None:
    """Raise :class:`DeliveryError` naming the status unless ``response`` is a 2xx.

    Redirects are failures too: contact records go only to the configured endpoint.
    The response body is not quoted (it may echo contact data).
    """
    if not 200 <= response.status_code < 300:
        request = response.request
        raise DeliveryError(f"HTTP {response.status_code} from {request.method} {request.url.path}")
