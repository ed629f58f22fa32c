"""Migration 0004: batches stored before it owned their events by ``batch_id``, and
their seqs could interleave (an event that committed late joined a later batch; a queued event
could sit below a frozen one). After it, batches own seq ranges: every batch must still own
exactly its events, with the same ids, and every queued event must still be queued, in order."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import alembic_config, upgrade
from tests.plugins.sql_store.test_rollup_day_migration import empty_database

pytestmark = pytest.mark.system  # migrates databases down and up

T = datetime(2026, 3, 1)
BATCH = (
    "INSERT INTO nc_outbox_batches (id, state, attempts, next_attempt_at, created_at, "
    "settled_at, first_seq) VALUES (:id, :state, 1, '2026-03-01 00:00:00', "
    "'2026-03-01 00:00:00', :settled, NULL)"
)
EVENT = (
    "INSERT INTO nc_outbox_events (event_id, event_type, occurred_at, payload, batch_id, "
    "subscriber_key, created_at) VALUES (:event_id, 'contact.message', '2026-03-01 00:00:00', "
    "'{}', :batch, :key, '2026-03-01 00:00:00')"
)
FIRST_SEQ = (
    "UPDATE nc_outbox_batches SET first_seq = (SELECT MIN(e.seq) FROM nc_outbox_events e "
    "WHERE e.batch_id = nc_outbox_batches.id)"
)
# In seq order: pending batch A and delivered batch B interleave, queued events sit between and
# after them, and batch E's only event was erased.
EVENTS = [
    ("e1", "A"),
    ("e2", "B"),
    ("e3", "A"),
    ("e4", None),
    ("e5", "B"),
    ("e6", "F"),
    ("e7", None),
]


def eid(name: str) -> str:
    return f"00000000-0000-4000-8000-0000000000{name[1:]:0>2}"


def test_0004_keeps_every_batch_its_events_and_queued_events_queued(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, "0003")
        with engine.begin() as connection:
            for batch, state, settled in (
                ("A", "pending", None),
                ("B", "delivered", T),
                ("E", "pending", None),
                ("F", "failed", T),
            ):
                connection.execute(text(BATCH), {"id": batch, "state": state, "settled": settled})
            for name, batch in EVENTS:
                connection.execute(
                    text(EVENT), {"event_id": eid(name), "batch": batch, "key": f"k-{name}"}
                )
            connection.execute(text(FIRST_SEQ))
        upgrade(engine)
        storage = SqlStorage(engine)
        try:
            with storage.transaction(write=False) as uow:
                status = uow.outbox.status()
                counts = {b: uow.outbox.get_batch(b).event_count for b in "ABEF"}
            assert counts == {"A": 2, "B": 2, "E": 0, "F": 1}
            assert status.unbatched == 2
            assert status.undelivered_events == 4  # A's two and the two queued
            assert status.failed_events == 1
            with storage.transaction() as uow:
                # B is delivered: erasing e5 discards nothing undelivered; e7 is queued.
                assert uow.outbox.discard_for_subscriber("k-e5") == 0
                assert uow.outbox.discard_for_subscriber("k-e7") == 1
                claimed = uow.outbox.claim_batches(
                    now=T, lease_until=T + timedelta(minutes=1), batch_size=100, max_batches=10
                )
            got = [(b.id, [e.event_id for e in b.events]) for b in claimed]
            # Pending A and E (empty: settled without a request), then the queue, oldest first.
            new = [b for b in got if b[0] not in ("A", "E")]
            assert sorted(b for b in got if b[0] in ("A", "E")) == [
                ("A", [eid("e1"), eid("e3")]),
                ("E", []),
            ]
            assert [events for _, events in new] == [[eid("e4")]]
            # A later event lands above every range, whatever seqs the old rows had.
            with storage.transaction() as uow:
                uow.outbox.enqueue(
                    event_id=eid("e8"),
                    event_type="contact.message",
                    occurred_at=T,
                    payload={},
                    subscriber_key=None,
                    created_at=T,
                )
                assert uow.outbox.status().unbatched == 1
        finally:
            storage.close()


def test_0004_downgrades_to_batch_ids_and_back(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine)
        storage = SqlStorage(engine)
        try:
            with storage.transaction() as uow:
                for n in range(5):
                    uow.outbox.enqueue(
                        event_id=eid(f"e{n}"),
                        event_type="contact.message",
                        occurred_at=T,
                        payload={},
                        subscriber_key=None,
                        created_at=T,
                    )
            with storage.transaction() as uow:
                [batch] = uow.outbox.claim_batches(
                    now=T, lease_until=T + timedelta(minutes=1), batch_size=3, max_batches=1
                )
            command.downgrade(alembic_config(engine), "0003")
            with engine.connect() as connection:
                members = connection.execute(
                    text("SELECT event_id, batch_id FROM nc_outbox_events ORDER BY seq")
                ).all()
            # SQLite: rebuilding nc_outbox_batches must not cascade to events already pointing
            # at it (they were deleted before the downgrade's steps were put in order).
            assert members == [(eid(f"e{n}"), batch.id if n < 3 else None) for n in range(5)]
            upgrade(engine)
            with storage.transaction(write=False) as uow:
                assert uow.outbox.get_batch(batch.id).event_count == 3
                assert uow.outbox.status().unbatched == 2
        finally:
            storage.close()
