"""Subscriber email in code-point order

On PostgreSQL ``nc_subscribers.email`` is declared ``COLLATE "C"``: the admin's prefix search
reads a range of the email index (``email >= prefix AND email < successor``, ordered by email),
which selects exactly the addresses starting with the prefix only when the column compares by
code point. A database created with a linguistic collation (ICU or libc ``en_US``) weighs
punctuation, case and accents otherwise. The table is not rewritten; the unique email index is
rebuilt under the column's new collation. SQLite is unchanged: its ``BINARY`` default already
compares by code point.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 22:45:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _email_type(collation: str | None) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.alter_column(
        "nc_subscribers",
        "email",
        # Without COLLATE the column takes the database's default collation back.
        type_=sa.String(320, collation=collation),
        existing_type=sa.String(320),
        existing_nullable=False,
    )


def upgrade() -> None:
    _email_type("C")


def downgrade() -> None:
    _email_type(None)
