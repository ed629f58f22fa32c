"""The host site's own tables: its users (who are also its newsletter subscribers) and articles.

These tables belong to the host, not to newsletter-connector: they live in the same database,
under the host's own names, and the host creates them (:func:`create_host_tables`), not the
package's migrations. The newsletter columns of ``host_users`` use the host's own naming
(``newsletter_status``, ``email_prefs`` as JSON, ``topics``); ``host_store`` maps them to the
package's :class:`~newsletter_connector.storage.records.SubscriberRecord`.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    inspect,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Engine, make_url

metadata = MetaData()
ID = BigInteger().with_variant(Integer(), "sqlite")
_MYSQL = ("mysql", "mariadb")
# On MySQL and MariaDB: times to the microsecond (a plain DATETIME drops them), and tables
# that compare text by code point (the usual _ci collation makes JOSE@ and jose@ one address).
TIME = DateTime().with_variant(mysql.DATETIME(fsp=6), *_MYSQL)
MYSQL_TABLE = {
    f"{d}_{k}": v for d in _MYSQL for k, v in (("charset", "utf8mb4"), ("collate", "utf8mb4_bin"))
}

host_users = Table(
    "host_users",
    metadata,
    # Autoincrement: a user created later always has a larger id (the keyset walk order).
    Column("id", ID, primary_key=True, autoincrement=True),
    # Compared by code point on PostgreSQL whatever the database's collation: the admin's prefix
    # search reads a range of this column's index (SQLite's BINARY default already does).
    Column(
        "email",
        String(320).with_variant(String(320, collation="C"), "postgresql"),
        nullable=False,
        unique=True,
    ),
    # The host's own columns: the newsletter store never reads or writes them.
    Column("display_name", String(200), nullable=True),
    Column("is_staff", Boolean, nullable=False, default=False),
    # Newsletter columns, in the host's naming.
    Column("first_name", String(200), nullable=True),
    Column("last_name", String(200), nullable=True),
    Column("zip", String(5), nullable=True),
    Column("phone", String(32), nullable=True),
    Column("sms_enabled", Boolean, nullable=False),
    Column("email_prefs", JSON, nullable=False),
    Column("newsletter_status", String(16), nullable=False),
    Column("age_range", String(16), nullable=True),
    Column("gender", String(16), nullable=True),
    Column("gender_self", String(200), nullable=True),
    Column("topics", JSON, nullable=False),
    Column("consent_source", String(200), nullable=True),
    Column("consent_collected_at", TIME, nullable=True),
    Column("created_at", TIME, nullable=False),
    Column("updated_at", TIME, nullable=False),
    Column("confirmed_at", TIME, nullable=True),
    Column("unsubscribed_at", TIME, nullable=True),
    Column("bounced_at", TIME, nullable=True),
    Column("profile_completed_at", TIME, nullable=True),
    # When a re-submit last announced the pending address again (NULL: only at signup).
    Column("newsletter_announced_at", TIME, nullable=True),
    Column("confirm_token", String(64), nullable=False, unique=True),
    Column("unsubscribe_token", String(64), nullable=False, unique=True),
    Column("profile_token", String(64), nullable=False, unique=True),
    # Lists filtered by status walk (status, id); counts by status use it too.
    Index("ix_host_users_newsletter_status_id", "newsletter_status", "id"),
    Index("ix_host_users_created_at_id", "created_at", "id"),
    Index("ix_host_users_unsubscribed_at", "unsubscribed_at"),
    Index("ix_host_users_bounced_at", "bounced_at"),
    **MYSQL_TABLE,
)

host_articles = Table(
    "host_articles",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("published_on", String(10), nullable=False, index=True),  # YYYY-MM-DD
    Column("section", String(32), nullable=False),  # a newsletter category slug
    Column("title", String(500), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("summary", Text, nullable=False),
    **MYSQL_TABLE,
)


def create_host_tables(engine: Engine) -> None:
    """Create the host's tables if they are missing (the host's own schema management)."""
    metadata.create_all(engine)


def host_tables_exist(engine: Engine) -> bool:
    names = set(inspect(engine).get_table_names())
    return all(table.name in names for table in metadata.sorted_tables)


def host_engine(database_url: str) -> Engine:
    """The host's own engine on the database it shares with the newsletter (a
    ``postgresql://`` URL through psycopg 3, the driver the newsletter's extra installs)."""
    url = make_url(database_url)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return create_engine(url)
