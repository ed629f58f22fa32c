"""The column types and table options the revisions create tables with, the same on SQLite
and PostgreSQL as SQLAlchemy's plain types, and on MySQL and MariaDB the ones that hold what
the others do (``sql_store.column_types`` explains each). Frozen with the revisions it serves:
add to it, never change what a name means, and import nothing from the package."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

MYSQL_DIALECTS = ("mysql", "mariadb")

Instant = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), *MYSQL_DIALECTS)
LongText = sa.Text().with_variant(mysql.LONGTEXT(), *MYSQL_DIALECTS)
LongBinary = sa.LargeBinary().with_variant(mysql.LONGBLOB(), *MYSQL_DIALECTS)
Double = sa.Float().with_variant(mysql.DOUBLE(), *MYSQL_DIALECTS)
#: JSON as the text it was written as (MySQL's own JSON type rewrites it).
Json = sa.JSON().with_variant(mysql.LONGTEXT(), *MYSQL_DIALECTS)

#: Every table's options on MySQL and MariaDB: InnoDB, 4-byte UTF-8, compared by code point.
TABLE_OPTIONS: dict[str, Any] = {
    f"{dialect}_{option}": value
    for dialect in MYSQL_DIALECTS
    for option, value in (("engine", "InnoDB"), ("charset", "utf8mb4"), ("collate", "utf8mb4_bin"))
}

#: An index's share of a page path on MySQL and MariaDB (4 bytes a letter, 3,072 a key).
PATH_PREFIX: dict[str, Any] = {f"{dialect}_length": {"path": 640} for dialect in MYSQL_DIALECTS}
