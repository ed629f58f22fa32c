"""Building the storage contract's frozen records from rows.

:func:`record_builder` fills a new record's ``__dict__`` instead of running its field-by-field
``__init__`` (bench: subscriber_walk); the records stay frozen dataclasses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from sqlalchemy import Insert, Table, Update, insert, select
from sqlalchemy.engine import Connection, RowMapping

from .engine import is_mysql

T = TypeVar("T")


def record_builder(cls: type[T]) -> Callable[[Sequence[Any]], T]:
    """A function building a ``cls`` from its field values in field order: ``build(values)``
    equals ``cls(*values)`` for any values ``cls.__init__`` accepts, but checks nothing (extra
    values are ignored).

    :raises TypeError: ``cls`` is not a plain dataclass whose ``__init__`` only assigns its
        fields (it has ``__slots__``, a ``__post_init__``, or a non-init field).
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a dataclass")
    fields = dataclasses.fields(cls)
    if (
        "__slots__" in cls.__dict__
        or hasattr(cls, "__post_init__")
        or any(not field.init for field in fields)
    ):
        raise TypeError(f"{cls.__name__}'s __init__ does more than assign its fields")
    # Written out per class, one item assignment per field (cheaper than __dict__.update).
    # Field names are identifiers written as string literals by repr(): no class text is code.
    lines = ["def build(values):", "    record = new(cls)", "    state = record.__dict__"]
    lines += [f"    state[{field.name!r}] = values[{i}]" for i, field in enumerate(fields)]
    lines.append("    return record")
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec("\n".join(lines), namespace)  # noqa: S102 (source made of field names only)
    build: Callable[[Sequence[Any]], T] = namespace["build"]
    build.__qualname__ = f"record_builder.<{cls.__name__}>"
    return build


def record_of(cls: type[T], row: Mapping[Any, Any]) -> T:
    """A ``cls`` of ``row``'s values of the same names as its fields."""
    names = [field.name for field in dataclasses.fields(cast(Any, cls))]
    return cls(**{name: row[name] for name in names})


def inserted_record(connection: Connection, table: Table, cls: type[T], **values: Any) -> T:
    """Insert ``values`` into ``table``; the stored row as a ``cls`` (:func:`record_of`)."""
    return record_of(cls, inserted_row(connection, table, insert(table).values(**values)))


# MySQL has no RETURNING and MariaDB none on UPDATE: there a row written is read back by its
# key, which the writing transaction holds locked.


def inserted_id(connection: Connection, statement: Insert) -> int:
    """Run the one-row insert ``statement``; the new row's id (its one-column primary key)."""
    key = connection.execute(statement).inserted_primary_key
    assert key is not None
    return int(key[0])


def inserted_row(connection: Connection, table: Table, statement: Insert) -> RowMapping:
    """Run the one-row insert ``statement`` into ``table``; the row as stored."""
    if not is_mysql(connection.dialect.name):
        return connection.execute(statement.returning(*table.c)).mappings().one()
    key = connection.execute(statement).inserted_primary_key
    assert key is not None
    return _row_by_key(connection, table, tuple(key))


def updated_row(
    connection: Connection, table: Table, statement: Update, key: Any
) -> RowMapping | None:
    """Run ``statement``, an update of at most the row of ``table`` whose (one-column)
    primary key is ``key``; the row as updated, or ``None`` when the update matched none."""
    if not is_mysql(connection.dialect.name):
        return connection.execute(statement.returning(*table.c)).mappings().first()
    if not connection.execute(statement).rowcount:
        return None
    return _row_by_key(connection, table, (key,))


def _row_by_key(connection: Connection, table: Table, key: tuple[Any, ...]) -> RowMapping:
    columns = table.primary_key.columns
    query = select(table).where(*(c == v for c, v in zip(columns, key, strict=True)))
    return connection.execute(query).mappings().one()
