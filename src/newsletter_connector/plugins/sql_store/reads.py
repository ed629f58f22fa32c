"""Several read statements run for their rows (the analytics figures of a range of days)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.sql.base import Executable

Rows = Sequence[RowMapping]

#: Runs ``statements`` on a connection and returns each one's rows, in the order given.
ReadAll = Callable[[Connection, Sequence[Executable]], list[Rows]]


def read_in_turn(connection: Connection, statements: Sequence[Executable]) -> list[Rows]:
    """Every row of each of ``statements``, as mappings, in the order given, one statement after
    the other on ``connection``."""
    return [connection.execute(statement).mappings().all() for statement in statements]
