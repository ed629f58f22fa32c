"""The built-in ``events`` transport: batches to ``POST {platform_base}/v1/events`` (SPEC 4.4).

Body: a JSON array of at most 100 events ``{id, type, occurred_at, payload}``, oldest first.
A ``newsletter.signup`` whose contact is pending also carries ``"confirm": true`` beside its
payload (the payload itself stays byte-identical to the contact resource). Any 2xx accepts the
whole batch; anything else fails it.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring_ascii as _string
from typing import Any

import httpx

from ..descriptors import OutboundTransport
from ..hookspecs import hookimpl
from ..storage import ConnectionRecord, OutboxEvent
from ..sync.transport import MAX_BATCH_SIZE, bearer_headers, require_2xx
from ..timeutil import isoformat_z

EVENTS_PATH = "/v1/events"


def wire_event(event: OutboxEvent) -> dict[str, Any]:
    """One event as it travels in the array."""
    body: dict[str, Any] = {
        "id": event.event_id,
        "type": event.event_type,
        "occurred_at": isoformat_z(event.occurred_at),
        "payload": event.payload,
    }
    if _confirms(event):
        body["confirm"] = True
    return body


def _confirms(event: OutboxEvent) -> bool:
    return event.event_type == "newsletter.signup" and event.payload.get("status") == "pending"


def wire_body(events: Sequence[OutboxEvent]) -> bytes:
    """The request body: the JSON array of :func:`wire_event` objects, with each payload's JSON
    text spliced in as the store holds it (decoded and re-encoded only for a signup, whose
    status decides ``confirm``)."""
    parts = []
    for event in events:
        confirm = '"confirm":true,' if _confirms(event) else ""
        parts.append(
            f'{{"id":{_string(event.event_id)},"type":{_string(event.event_type)},'
            f'"occurred_at":"{isoformat_z(event.occurred_at)}",{confirm}'
            f'"payload":{event.payload_json}}}'
        )
    return ("[" + ",".join(parts) + "]").encode()


class EventsTransport:
    """One request per batch."""

    max_batch_size = MAX_BATCH_SIZE
    max_requests_per_batch = 1

    def __init__(self, connection: ConnectionRecord, http_client: httpx.Client) -> None:
        self.url = connection.platform_base + EVENTS_PATH
        self.token = connection.token
        self.http = http_client

    def __repr__(self) -> str:
        return f"EventsTransport(url={self.url!r})"

    def deliver(self, events: Sequence[OutboxEvent]) -> None:
        if not events:
            return
        response = self.http.post(
            self.url, content=wire_body(events), headers=bearer_headers(self.token)
        )
        require_2xx(response)


@hookimpl(trylast=True)
def newsletter_outbound_transports() -> list[OutboundTransport]:
    return [
        OutboundTransport(
            name="events",
            description="batches of up to 100 events to POST {platform_base}/v1/events",
            factory=EventsTransport,
        )
    ]
