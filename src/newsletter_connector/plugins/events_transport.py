"""The built-in ``events`` transport: batches to ``POST {platform_base}/v1/events`` (SPEC 4.4).

Body: a JSON array of at most 100 events ``{id, type, occurred_at, payload}``, oldest first.
A ``newsletter.signup`` whose contact is pending also carries ``"confirm": true`` beside its
payload (the payload itself stays byte-identical to the contact resource). Any 2xx accepts the
whole batch; anything else fails it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from ..descriptors import OutboundTransport
from ..hookspecs import hookimpl
from ..https_rule import without_credentials
from ..storage import ConnectionRecord, OutboxEvent
from ..sync.http import RunnerClient
from ..sync.transport import MAX_BATCH_SIZE, bearer_headers, require_2xx
from ..timeutil import isoformat_z, to_naive_utc

EVENTS_PATH = "/v1/events"
# Naive datetimes are UTC, written with "Z" (microseconds only when non-zero: orjson's default).
_TIMES_AS_UTC_Z = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z


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


_SIGNUP = "newsletter.signup"


def _confirms(event: OutboxEvent) -> bool:
    return event.event_type == _SIGNUP and event.payload.get("status") == "pending"


def wire_body(events: Sequence[OutboxEvent]) -> bytes:
    """The request body: the JSON array of :func:`wire_event` objects, written by orjson, with
    each payload's JSON text spliced in as the store holds it.

    orjson writes a naive (UTC) time as :func:`~newsletter_connector.timeutil.isoformat_z`
    does — microseconds only when there are some, then ``Z``; an aware time is converted to UTC
    first.
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
        wire["payload"] = orjson.Fragment(event.payload_json)
        objects.append(wire)
    return orjson.dumps(objects, option=_TIMES_AS_UTC_Z)


class EventsTransport:
    """One request per batch."""

    max_batch_size = MAX_BATCH_SIZE
    max_requests_per_batch = 1

    def __init__(self, connection: ConnectionRecord, http_client: httpx.Client) -> None:
        self.url = connection.platform_base + EVENTS_PATH
        self.token = connection.token
        self.http = http_client
        # Parsed once, not on every request (issue 10).
        self._url = httpx.URL(self.url)
        self._headers = bearer_headers(self.token)

    def __repr__(self) -> str:
        return f"EventsTransport(url={without_credentials(self.url)!r})"

    def deliver(self, events: Sequence[OutboxEvent]) -> None:
        if not events:
            return
        body = wire_body(events)
        if isinstance(self.http, RunnerClient):
            response = self.http.push(self._url, content=body, headers=self._headers)
        else:  # a client of the host's own
            response = self.http.post(self._url, content=body, headers=self._headers)
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
