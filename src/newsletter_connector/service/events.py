"""Queuing outbound events: call :func:`queue_event` inside the same ``storage.transaction()``
as the state change, so both commit together or not at all (transactional outbox).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from ..json_encoding import json_values
from ..plugins.sql_store.store import SqlUnitOfWork
from ..storage.outbox_records import NewEvent
from .context import ServiceContext

#: Every event type the service emits (docs/delivery.md, "events: batches to /v1/events").
EVENT_TYPES = (
    "newsletter.signup",
    "newsletter.confirmed",
    "newsletter.unsubscribed",
    "newsletter.bounced",
    "newsletter.profile_completed",
    "newsletter.issue",
    "contact.message",
    "analytics.daily_rollup",
)

SUBSCRIBER_KEY_PURPOSE = "subscriber"


def subscriber_key(context: ServiceContext, email: str) -> str:
    """The keyed hash that ties stored rows (outbox events, deletion records) to an address
    without storing the address itself."""
    return context.keyed_hash(SUBSCRIBER_KEY_PURPOSE, email.strip().lower())


def new_event(
    context: ServiceContext,
    event_type: str,
    payload: dict[str, Any],
    *,
    subscriber_email: str | None = None,
    event_id: str | None = None,
) -> NewEvent:
    """An event to queue, with a new UUID (the idempotency key; ``event_id`` when the caller
    made it first, to keep beside what it records) and the time now; ``payload`` is stored as
    the JSON values ``json_encoding`` writes, so the push carries the API's bytes.
    ``subscriber_email``: the address the payload carries (erasing it discards the event).
    """
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    now = context.clock()
    return NewEvent(
        event_id=event_id or str(uuid.uuid4()),
        event_type=event_type,
        occurred_at=now,
        payload=json_values(payload),
        subscriber_key=subscriber_key(context, subscriber_email) if subscriber_email else None,
        created_at=now,
    )


def new_subscriber_events(
    context: ServiceContext, event_types: Sequence[str], payload: dict[str, Any], key: str
) -> list[NewEvent]:
    """Events of ``event_types``, in order, all carrying ``payload`` about the subscriber whose
    :func:`subscriber_key` is ``key``, as :func:`new_event` makes each (the payload converted
    once: an import makes two for each of a million lines)."""
    for event_type in event_types:
        if event_type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {event_type!r}")
    now = context.clock()
    values = json_values(payload)
    return [
        NewEvent(
            event_id=str(uuid.uuid4()),
            event_type=event_type,
            occurred_at=now,
            payload=values,
            subscriber_key=key,
            created_at=now,
        )
        for event_type in event_types
    ]


def queue_event(
    uow: SqlUnitOfWork,
    context: ServiceContext,
    event_type: str,
    payload: dict[str, Any],
    *,
    subscriber_email: str | None = None,
    event_id: str | None = None,
) -> str:
    """Queue an event in ``uow``'s transaction and return its id (see :func:`new_event`)."""
    event = new_event(
        context, event_type, payload, subscriber_email=subscriber_email, event_id=event_id
    )
    uow.outbox.enqueue(**vars(event))
    return event.event_id
