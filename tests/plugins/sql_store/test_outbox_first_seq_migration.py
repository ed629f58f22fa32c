"""Migration 0003: outbox batches stored before it get ``first_seq`` (their first
event's seq), so retries of old and new batches alike go out oldest first."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import inspect, select, text

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import alembic_config, upgrade
from newsletter_connector.plugins.sql_store.tables import outbox_batches
from tests.plugins.sql_store.test_rollup_day_migration import empty_database

pytestmark = pytest.mark.system  # migrates databases down and up

BATCH = (
    "INSERT INTO nc_outbox_batches (id, state, attempts, next_attempt_at, created_at) "
    "VALUES (:id, 'pending', 1, '2026-03-01 00:00:00', '2026-03-01 00:00:00')"
)
EVENT = (
    "INSERT INTO nc_outbox_events (event_id, event_type, occurred_at, payload, batch_id, "
    "created_at) VALUES (:event_id, 'contact.message', '2026-03-01 00:00:00', '{}', :batch, "
    "'2026-03-01 00:00:00')"
)


def test_0003_fills_first_seq_of_batches_stored_before_it(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, "0002")
        with engine.begin() as connection:
            for batch_id in ("b-later", "b-earlier", "b-empty"):
                connection.execute(text(BATCH), {"id": batch_id})
            for n, batch_id in enumerate(["b-earlier", "b-earlier", "b-later", None]):
                connection.execute(
                    text(EVENT),
                    {"event_id": f"00000000-0000-4000-8000-00000000000{n}", "batch": batch_id},
                )
            seqs = list(connection.scalars(text("SELECT seq FROM nc_outbox_events ORDER BY seq")))
        upgrade(engine, "0003")
        with engine.connect() as connection:
            b = outbox_batches.c
            first = dict(connection.execute(select(b.id, b.first_seq)).all())
        engine.dispose()
    assert first == {"b-earlier": seqs[0], "b-later": seqs[2], "b-empty": None}


def test_0003_downgrades_without_losing_batched_events(tmp_path: Path) -> None:
    """SQLite's batch mode rebuilt nc_outbox_batches, and dropping the old table cascaded to
    every event pointing at a batch; the downgrade must keep them all."""
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, "0003")
        with engine.begin() as connection:
            connection.execute(text(BATCH), {"id": "b-kept"})
            for n, batch_id in enumerate(["b-kept", "b-kept", None]):
                connection.execute(
                    text(EVENT),
                    {"event_id": f"00000000-0000-4000-8000-00000000000{n}", "batch": batch_id},
                )
        command.downgrade(alembic_config(engine), "0002")
        with engine.connect() as connection:
            events = connection.execute(
                text("SELECT batch_id FROM nc_outbox_events ORDER BY seq")
            ).all()
            columns = {c["name"] for c in inspect(connection).get_columns("nc_outbox_batches")}
        engine.dispose()
    assert events == [("b-kept",), ("b-kept",), (None,)]
    assert "first_seq" not in columns
