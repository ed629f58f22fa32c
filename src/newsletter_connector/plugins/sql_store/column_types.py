"""Column types that hold the same values on every database the store runs on.

SQLite and PostgreSQL take the plain SQLAlchemy types. MySQL and MariaDB need others: a plain
``DATETIME`` drops microseconds, ``TEXT`` and ``BLOB`` stop at 64 KiB (an issue's HTML, an
upload's 1 MiB parts), ``FLOAT`` has 4 bytes, and MySQL's ``JSON`` stores a binary form and
gives back rewritten text (keys reordered, spaces changed), where a pushed payload must keep
the bytes it was stored with. :data:`TABLE_OPTIONS` compares every text by code point
(``utf8mb4_bin``): the server's usual ``utf8mb4_general_ci`` would make ``jose@``, ``JOSE@``
and ``josé@`` one unique address, and a link token match another letter case.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, DateTime, Float, LargeBinary, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from ...json_encoding import dumps_text
from .stored_json import stored_json_loads

#: The dialect names of MySQL and MariaDB (a ``mariadb+…`` URL has a dialect of its own).
MYSQL_DIALECTS = ("mysql", "mariadb")


class JsonText(TypeDecorator[Any]):
    """A JSON value stored as the text the store's encoder wrote (MySQL, MariaDB), read back
    through :func:`.stored_json.stored_json_loads` as the other dialects' JSON columns are."""

    impl = mysql.LONGTEXT
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        return None if value is None else dumps_text(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else stored_json_loads(value)


#: A naive UTC time to the microsecond.
Instant = DateTime().with_variant(mysql.DATETIME(fsp=6), *MYSQL_DIALECTS)
#: Text of any length.
LongText = Text().with_variant(mysql.LONGTEXT(), *MYSQL_DIALECTS)
#: Bytes of any length.
LongBinary = LargeBinary().with_variant(mysql.LONGBLOB(), *MYSQL_DIALECTS)
#: An 8-byte float.
Double = Float().with_variant(mysql.DOUBLE(), *MYSQL_DIALECTS)
#: A JSON value, kept as the text it was stored as.
Json = JSON().with_variant(JsonText(), *MYSQL_DIALECTS)

#: Every table's options on MySQL and MariaDB: InnoDB, 4-byte UTF-8, compared by code point.
TABLE_OPTIONS: dict[str, Any] = {
    f"{dialect}_{option}": value
    for dialect in MYSQL_DIALECTS
    for option, value in (("engine", "InnoDB"), ("charset", "utf8mb4"), ("collate", "utf8mb4_bin"))
}
