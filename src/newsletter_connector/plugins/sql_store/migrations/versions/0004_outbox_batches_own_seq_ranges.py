"""Outbox batches own a seq range instead of their events carrying ``batch_id``

Every event is renumbered above every seq ever drawn: batch by batch in freeze order
(``first_seq``), each batch's events contiguous in their old order, then the queued events in
theirs, so each batch keeps exactly its events and ids. SQLite's table is rebuilt with AUTOINCREMENT
(a seq a range covered is never reused). See docs/contributing/decisions/performance.md, "Batches
own a ``seq`` range".

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21 08:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import MYSQL_DIALECTS

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_FK = "fk_nc_outbox_events_batch_id_nc_outbox_batches"


def _renumber() -> None:
    bind = op.get_bind()
    stored = bind.scalar(sa.text("SELECT COALESCE(MAX(seq), 0) FROM nc_outbox_events"))
    # Above every seq ever handed out, not only the largest one still stored.
    mysql = bind.dialect.name in MYSQL_DIALECTS
    if bind.dialect.name == "postgresql":
        drawn = (
            "SELECT last_value FROM pg_sequences WHERE sequencename = 'nc_outbox_events_seq_seq'"
        )
    elif mysql:
        drawn = (
            "SELECT AUTO_INCREMENT - 1 FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'nc_outbox_events'"
        )
    elif bind.scalar(sa.text("SELECT COUNT(*) FROM sqlite_master WHERE name = 'sqlite_sequence'")):
        drawn = "SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'nc_outbox_events'"
    else:
        drawn = None
    offset = max(int(stored), int((bind.scalar(sa.text(drawn)) if drawn else 0) or 0))
    op.execute(
        sa.text(
            "CREATE TEMPORARY TABLE nc_outbox_renumber AS SELECT e.seq AS old_seq, "
            "ROW_NUMBER() OVER (ORDER BY CASE WHEN b.id IS NULL THEN 1 ELSE 0 END, "
            "b.first_seq, b.id, e.seq) + :offset AS new_seq "
            "FROM nc_outbox_events e LEFT JOIN nc_outbox_batches b ON b.id = e.batch_id"
        ).bindparams(offset=int(offset))
    )
    op.execute("CREATE UNIQUE INDEX nc_outbox_renumber_old ON nc_outbox_renumber (old_seq)")
    # Every new seq is above every old one, so no two rows ever share a seq on the way.
    op.execute(
        "UPDATE nc_outbox_events SET seq = (SELECT r.new_seq FROM nc_outbox_renumber r "
        "WHERE r.old_seq = nc_outbox_events.seq)"
    )
    op.execute("DROP TABLE nc_outbox_renumber")
    op.execute(
        "UPDATE nc_outbox_batches SET "
        "first_seq = (SELECT MIN(e.seq) FROM nc_outbox_events e WHERE e.batch_id = "
        "nc_outbox_batches.id), "
        "last_seq = (SELECT MAX(e.seq) FROM nc_outbox_events e WHERE e.batch_id = "
        "nc_outbox_batches.id)"
    )
    if bind.dialect.name == "postgresql":
        op.execute(
            "SELECT setval(pg_get_serial_sequence('nc_outbox_events', 'seq'), "
            "(SELECT MAX(seq) FROM nc_outbox_events)) "
            "WHERE EXISTS (SELECT 1 FROM nc_outbox_events)"
        )
    elif mysql:  # an UPDATE leaves the counter where it was; InnoDB raises it to MAX + 1
        op.execute("ALTER TABLE nc_outbox_events AUTO_INCREMENT = 1")


def upgrade() -> None:
    with op.batch_alter_table("nc_outbox_batches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_seq", sa.BigInteger(), nullable=True))
        batch_op.create_index("ix_nc_outbox_batches_last_seq", ["last_seq"], unique=False)
    _renumber()
    if op.get_bind().dialect.name in MYSQL_DIALECTS:
        # InnoDB keeps the index a foreign key uses until the key is gone.
        op.drop_constraint(_FK, "nc_outbox_events", type_="foreignkey")
        op.drop_index("ix_nc_outbox_events_unbatched", "nc_outbox_events")
        op.drop_index("ix_nc_outbox_events_batch_id_seq", "nc_outbox_events")
        op.drop_column("nc_outbox_events", "batch_id")
        return
    with op.batch_alter_table("nc_outbox_events", schema=None) as batch_op:
        batch_op.drop_index("ix_nc_outbox_events_unbatched")
        batch_op.drop_index("ix_nc_outbox_events_batch_id_seq")
    with op.batch_alter_table(
        "nc_outbox_events",
        schema=None,
        recreate="always" if op.get_bind().dialect.name == "sqlite" else "auto",
        table_kwargs={"sqlite_autoincrement": True},
    ) as batch_op:
        batch_op.drop_constraint(_FK, type_="foreignkey")
        batch_op.drop_column("batch_id")


def downgrade() -> None:
    # In this order on SQLite: rebuilding nc_outbox_batches drops the old table, and with
    # foreign keys on, that deletes (cascades to) every event whose batch_id already refers to it.
    with op.batch_alter_table("nc_outbox_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("batch_id", sa.String(length=36), nullable=True))
    op.execute(
        "UPDATE nc_outbox_events SET batch_id = (SELECT b.id FROM nc_outbox_batches b "
        "WHERE nc_outbox_events.seq BETWEEN b.first_seq AND b.last_seq)"
    )
    with op.batch_alter_table("nc_outbox_batches", schema=None) as batch_op:
        batch_op.drop_index("ix_nc_outbox_batches_last_seq")
        batch_op.drop_column("last_seq")
    with op.batch_alter_table("nc_outbox_events", schema=None) as batch_op:
        batch_op.create_foreign_key(
            _FK, "nc_outbox_batches", ["batch_id"], ["id"], ondelete="CASCADE"
        )
        batch_op.create_index("ix_nc_outbox_events_batch_id_seq", ["batch_id", "seq"], unique=False)
        batch_op.create_index(
            "ix_nc_outbox_events_unbatched",
            ["seq"],
            unique=False,
            postgresql_where=sa.text("batch_id IS NULL"),
            sqlite_where=sa.text("batch_id IS NULL"),
        )
