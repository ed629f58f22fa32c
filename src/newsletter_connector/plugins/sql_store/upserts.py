"""Inserts that meet a stored key without failing, on every dialect the SQL store supports.

SQLite and PostgreSQL say ``ON CONFLICT``. MySQL and MariaDB have ``ON DUPLICATE KEY UPDATE``,
whose count of affected rows cannot tell a new row from a duplicate (the store counts matched
rows, as PostgreSQL does), and ``INSERT IGNORE``, which also turns a value cut short or a
broken foreign key into a warning; so there an insert runs as it is, and a duplicate key
(error 1062, which InnoDB undoes for the one statement, not the transaction) means "stored".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Insert, exc
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.engine import Connection

from .engine import is_mysql

#: MySQL's and MariaDB's error for a key already stored.
DUPLICATE_KEY = 1062


def insert_ignoring_duplicates(
    dialect: str, table: Any, *, index_elements: list[Any] | None = None
) -> Insert:
    """An insert into ``table`` that stores nothing (and returns no row) when it would break
    a unique index: only the one on ``index_elements`` when given, any otherwise. SQLite and
    PostgreSQL only: elsewhere, :func:`insert_unless_stored`."""
    if dialect == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=index_elements)
    return sqlite.insert(table).on_conflict_do_nothing(index_elements=index_elements)


def mysql_error_number(orig: object) -> int | None:
    """The error number of a MySQL driver's error (its first argument), else ``None``."""
    args: Any = getattr(orig, "args", None)
    return args[0] if args and isinstance(args[0], int) else None


def is_duplicate_key(error: exc.DBAPIError) -> bool:
    """Whether ``error`` is MySQL's or MariaDB's duplicate key (a unique index broken)."""
    return isinstance(error, exc.IntegrityError) and mysql_error_number(error.orig) == DUPLICATE_KEY


def insert_unless_stored(
    connection: Connection,
    table: Any,
    values: dict[str, Any],
    *,
    index_elements: list[Any] | None = None,
) -> bool:
    """Insert ``values`` into ``table`` unless that would break a unique index (only the one
    on ``index_elements`` when given, on SQLite and PostgreSQL; any on MySQL and MariaDB);
    whether the row was stored. Concurrent inserts of one key store it once."""
    dialect = connection.dialect.name
    if not is_mysql(dialect):
        # A row back when stored (psycopg's rowcount says -1 for an insert that met a key).
        statement = insert_ignoring_duplicates(dialect, table, index_elements=index_elements)
        key = next(iter(table.primary_key.columns))
        return connection.execute(statement.values(**values).returning(key)).first() is not None
    try:
        connection.execute(mysql.insert(table).values(**values))
    except exc.IntegrityError as error:
        if not is_duplicate_key(error):
            raise
        return False
    return True


def insert_or_update(
    dialect: str, table: Any, *, index_elements: list[Any], values: dict[str, Any]
) -> Insert:
    """One statement storing ``values`` in ``table``: a new row, or the row already holding
    the same ``index_elements``, overwritten with the other values. Concurrent writers of one
    key never meet a unique-index error; the last to commit wins."""
    keys = {column.name for column in index_elements}
    if is_mysql(dialect):
        inserted = mysql.insert(table).values(**values)
        updates = {name: inserted.inserted[name] for name in values if name not in keys}
        return inserted.on_duplicate_key_update(updates)
    module: Any = postgresql if dialect == "postgresql" else sqlite
    statement = module.insert(table).values(**values)
    changed = {name: statement.excluded[name] for name in values if name not in keys}
    upsert: Insert = statement.on_conflict_do_update(index_elements=index_elements, set_=changed)
    return upsert
