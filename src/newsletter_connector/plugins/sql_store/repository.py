"""The base of the SQL store's repositories."""

from __future__ import annotations

from sqlalchemy.engine import Connection


class SqlRepository:
    """A repository working on its unit of work's ``connection``, inside its transaction."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
