"""``INSERT ... ON CONFLICT`` for the dialects the SQL store supports."""

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


def insert_or_update(
    dialect: str, table: Any, *, index_elements: list[Any], values: dict[str, Any]
) -> Insert:
    """One statement storing ``values`` in ``table``: a new row, or the row already holding
    the same ``index_elements``, overwritten with the other values. Concurrent writers of one
    key never meet a unique-index error; the last to commit wins."""
    module: Any = postgresql if dialect == "postgresql" else sqlite
    statement = module.insert(table).values(**values)
    keys = {column.name for column in index_elements}
    changed = {name: statement.excluded[name] for name in values if name not in keys}
    upsert: Insert = statement.on_conflict_do_update(index_elements=index_elements, set_=changed)
    return upsert
