"""``INSERT ... ON CONFLICT DO NOTHING`` for the dialects the SQL store supports."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Insert
from sqlalchemy.dialects import postgresql, sqlite


def insert_ignoring_duplicates(
    dialect: str, table: Any, *, index_elements: list[Any] | None = None
) -> Insert:
    """An insert into ``table`` that stores nothing (and returns no row) when it would break
    a unique index: only the one on ``index_elements`` when given, any otherwise."""
    if dialect == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=index_elements)
    return sqlite.insert(table).on_conflict_do_nothing(index_elements=index_elements)
