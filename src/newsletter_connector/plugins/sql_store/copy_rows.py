"""Many rows into a PostgreSQL table with ``COPY ... FROM STDIN`` (bench: subscriber_import).

A multi-row ``INSERT`` has a new text, and thousands of parameters, for every chunk of an
import: the driver parses and escapes each one in Python. ``COPY`` streams the rows in the
driver's C code, about eight times faster for the outbox events of an import. Used through the
SQLAlchemy connection's own DB-API connection, so the rows join its transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection


def copy_rows(
    connection: Connection,
    table: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    meanwhile: Callable[[], None] | None = None,
) -> None:
    """Write ``rows`` (values in ``columns`` order; JSON columns as their JSON text) into
    ``table`` in ``connection``'s transaction. A driver failure is raised as SQLAlchemy's
    error of the same kind (a unique index broken: ``IntegrityError``), without the rows (they
    hold addresses).

    ``meanwhile`` (which must not raise) is called once the rows are sent, before waiting for
    the server to store them: the caller's next work runs while the server, on its own core,
    indexes the rows."""
    import psycopg  # PostgreSQL's driver is an optional extra
    from psycopg import sql

    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    driver = connection.connection.driver_connection
    assert isinstance(driver, psycopg.Connection)
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
            if meanwhile is not None:
                meanwhile()
    except psycopg.OperationalError as error:
        raise sa_exc.OperationalError(f"COPY {table}", None, error) from None
    except psycopg.IntegrityError as error:
        raise sa_exc.IntegrityError(f"COPY {table}", None, error) from None
    except psycopg.Error as error:
        raise sa_exc.DBAPIError(f"COPY {table}", None, error) from None
