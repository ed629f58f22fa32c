"""A signup on PostgreSQL in one statement, its own transaction (bench: signups, signup_cpu)::

    WITH added AS (INSERT INTO subscribers ... SELECT ... WHERE NOT EXISTS (suppression)
                   ON CONFLICT (email) DO NOTHING RETURNING id),
         event_0 AS (INSERT INTO outbox_events ... SELECT ... FROM horizon, added RETURNING seq),
         event_1 AS (... FROM horizon, event_0 ...)
    SELECT id FROM added

Each insert enters its commit horizon (:meth:`.CommitHorizon.row_entering`) before drawing
its id. Each event is read from the row the insert before it returned: none is queued for a
taken (or suppressed) address, and each draws its ``seq`` after the previous one, so the events
keep order. The parameter ``unless_suppressed`` is the address's keyed hash, or NULL to skip
the suppression check (no row equals NULL).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from sqlalchemy import CTE, Select, insert, select
from sqlalchemy.engine import Engine

from ....storage.outbox_records import NewEvent
from ....storage.records import SubscriberData, SubscriberRecord
from ..outbox import ENQUEUE_COLUMNS, event_columns
from ..outbox_claims import OUTBOX_HORIZON
from ..subscribers import insert_subscriber_statement, subscriber_columns, subscriber_fields
from ..tables import outbox_events
from .pooled_statement import PooledStatement

#: Signups queue one event (``newsletter.signup``), or two with consent (``.confirmed``).
MAX_EVENTS = 2


def signup_statement(event_count: int) -> Select[Any]:
    """The statement adding a subscriber with ``event_count`` events; event ``i``'s values
    are the parameters ``e{i}_<column>``."""
    added = insert_subscriber_statement().cte("added")
    previous: CTE = added
    statement = select(added.c.id)
    for index in range(event_count):
        row = OUTBOX_HORIZON.row_entering(
            outbox_events, ENQUEUE_COLUMNS, prefix=f"e{index}_"
        ).select_from(previous)
        event = (
            insert(outbox_events)
            .from_select(ENQUEUE_COLUMNS, row)
            .returning(outbox_events.c.seq)
            .cte(f"event_{index}")
        )
        statement = statement.add_cte(event)
        previous = event
    return statement


class SignupInsert:
    """Adds a subscriber with its events in one statement (PostgreSQL only)."""

    def __init__(self, engine: Engine) -> None:
        if engine.dialect.name != "postgresql":
            raise ValueError("a one-statement signup needs PostgreSQL")
        self.engine = engine

    @cached_property
    def _statements(self) -> dict[int, PooledStatement]:
        return {
            count: PooledStatement(self.engine, signup_statement(count))
            for count in range(1, MAX_EVENTS + 1)
        }

    def handles(self, events: Sequence[NewEvent]) -> bool:
        """Whether :meth:`add` takes this many events."""
        return 1 <= len(events) <= MAX_EVENTS

    def add(
        self,
        data: SubscriberData,
        events: Sequence[NewEvent],
        *,
        unless_suppressed: str | None = None,
    ) -> SubscriberRecord | None:
        """As ``SqlStorage.add_subscriber`` (for 1 to :data:`MAX_EVENTS` events).

        :raises sqlalchemy.exc.DBAPIError: the driver failed (translated like any other).
        """
        params = subscriber_columns(data)
        params["unless_suppressed"] = unless_suppressed
        for index, event in enumerate(events):
            params.update(event_columns(event, prefix=f"e{index}_"))
        row = self._statements[len(events)].first_row(params)
        if row is None:
            return None  # the address is already stored, or suppressed; nothing was written
        return SubscriberRecord(id=int(row[0]), **subscriber_fields(data))
