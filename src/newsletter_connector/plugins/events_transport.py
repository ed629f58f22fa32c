"""The built-in ``events`` transport: batches of up to 100 events, oldest first, to
``POST {platform_base}/v1/events`` (docs/delivery.md, "events: batches to /v1/events"). Any 2xx
accepts the whole batch; anything else fails it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from ..descriptors import OutboundTransport
from ..hookspecs import hookimpl
from ..https_rule import without_credentials
from ..json_encoding import dumps, raw_json
from ..storage.access_records import ConnectionRecord
from ..storage.outbox_records import OutboxEvent
from ..storage.transport import MAX_BATCH_SIZE, bearer_headers, require_2xx
from ..timeutil import to_naive_utc

EVENTS_PATH = "/v1/events"
_SIGNUP = "newsletter.signup"


def _confirms(event: OutboxEvent) -> bool:
    return event.event_type == _SIGNUP and event.payload.get("status") == "pending"


def wire_body(events: Sequence[OutboxEvent]) -> bytes:
    """The request body: the JSON array of ``{id, type, occurred_at, [confirm,] payload}``
    objects, written by ``json_encoding`` (``occurred_at`` in UTC with ``Z``), with each
    payload's JSON text spliced in as the store holds it (decoded only for a signup, whose
    status decides ``confirm``).
    """
    objects = []
    for event in events:
        occurred_at = event.occurred_at
        if occurred_at.tzinfo is not None:
            occurred_at = to_naive_utc(occurred_at)
        wire: dict[str, Any] = {"id": event.event_id, "type": event.event_type}
        wire["occurred_at"] = occurred_at
        if _confirms(event):
            wire["confirm"] = True
        wire["payload"] = raw_json(event.payload_json)
        objects.append(wire)
    return dumps(objects)


class EventsTransport:
    """One request per batch."""

    max_batch_size = MAX_BATCH_SIZE
    max_requests_per_batch = 1

    def __init__(self, connection: ConnectionRecord, http_client: httpx.Client) -> None:
        self.url = connection.platform_base + EVENTS_PATH
        self.token = connection.token
        self.http = http_client
        # Parsed once, not on every request (``bench.sync``).
        self._url = httpx.URL(self.url)
        self._headers = bearer_headers(self.token)

    def __repr__(self) -> str:
        return f"EventsTransport(url={without_credentials(self.url)!r})"

    def deliver(self, events: Sequence[OutboxEvent]) -> None:
        if not events:
            return
        body = wire_body(events)
        require_2xx(self.http.post(self._url, content=body, headers=self._headers))


@hookimpl(trylast=True)
def newsletter_outbound_transports() -> list[OutboundTransport]:
    return [
        OutboundTransport(
            name="events",
            description="batches of up to 100 events to POST {platform_base}/v1/events",
            factory=EventsTransport,
            check_path=EVENTS_PATH,
        )
    ]
