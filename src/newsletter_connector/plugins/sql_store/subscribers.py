"""Repositories of the SQL store for subscribers, erasure evidence and contact messages.

Keyset walks over subscribers and contact messages never skip a row that commits late: on
PostgreSQL a page reads only up to a commit horizon
(:class:`~newsletter_connector.storage.host_sql.CommitHorizon`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    Column,
    MetaData,
    Select,
    Table,
    Text,
    any_,
    bindparam,
    cast,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateTable, DropTable

from ...json_encoding import dumps_text
from ...storage.host_sql import CommitHorizon, changes_per_day, prefix_range
from ...storage.records import (
    ContactMessageRecord,
    DeletionRecord,
    EmailPrefs,
    SubscriberData,
    SubscriberDay,
    SubscriberRecord,
    TokenKind,
)
from ...storage.subscriber_query import (
    SubscriberFilter,
    SubscriberQuery,
    SubscriberScan,
    SubscriberTally,
)
from . import subscriber_scan
from .copy_rows import copy_rows
from .engine import is_mysql
from .record_builders import inserted_id, inserted_record, record_builder, record_of
from .repository import SqlRepository
from .tables import contact_messages, deletions, subscribers, suppressions
from .upserts import insert_ignoring_duplicates, is_duplicate_key

# Any constants: the PostgreSQL advisory locks of the two horizons (storage.host_sql).
SIGNUP_LOCK_ID = 0x6E6C_7375_6273  # "nlsubs"
_SUBSCRIBERS_HORIZON = CommitHorizon(SIGNUP_LOCK_ID, subscribers.c.id)
_MESSAGES_HORIZON = CommitHorizon(SIGNUP_LOCK_ID + 1, contact_messages.c.id)

_TOKEN_COLUMNS = {
    "confirm": subscribers.c.confirm_token,
    "unsubscribe": subscribers.c.unsubscribe_token,
    "profile": subscribers.c.profile_token,
}


def subscriber_columns(data: SubscriberData) -> dict[str, Any]:
    """The insert's column values of ``data`` (every column but ``id``)."""
    values = subscriber_fields(data)  # shallow: asdict's deep copy cost more
    prefs = values.pop("prefs")
    values.pop("id", None)
    values["categories"] = list(data.categories)
    values["pref_briefings"] = prefs.briefings
    values["pref_puzzles"] = prefs.puzzles
    values["pref_on_this_day"] = prefs.on_this_day
    values["pref_local"] = prefs.local
    return values


#: The record's columns in the order :func:`_subscriber` unpacks them. ``categories`` is read as
#: its JSON text and decoded through a cache: a list has at most 2^8 category sets
#: (bench: subscriber_walk).
_RECORD_FIELDS = (
    "id", "email", "first_name", "last_name", "zip", "phone", "sms_enabled", "pref_briefings",
    "pref_puzzles", "pref_on_this_day", "pref_local", "status", "age_range", "gender",
    "gender_self", "categories", "consent_source", "consent_collected_at", "created_at",
    "updated_at", "confirmed_at", "unsubscribed_at", "bounced_at", "profile_completed_at",
    "confirm_token", "unsubscribe_token", "profile_token",
)  # fmt: skip


def _select_record(columns: Any) -> Select[Any]:
    """Selects a record's fields from ``columns`` (the table's, or a subquery's)."""
    return select(
        *(
            cast(columns[name], Text) if name == "categories" else columns[name]
            for name in _RECORD_FIELDS
        )
    )


_SELECT_RECORD = _select_record(subscribers.c)
_build_record = record_builder(SubscriberRecord)


@lru_cache(maxsize=1024)
def _categories(stored: str | None) -> tuple[str, ...]:
    """The category tuple of the column's JSON text (``NULL`` or ``null`` give ``()``)."""
    return tuple(json.loads(stored) or ()) if stored is not None else ()


@lru_cache(maxsize=256)
def _prefs(briefings: str, puzzles: str, on_this_day: str, local: str) -> EmailPrefs:
    """The (immutable, so shared) prefs record of four cadences; 3^4 combinations exist."""
    return EmailPrefs(briefings=briefings, puzzles=puzzles, on_this_day=on_this_day, local=local)


def _subscriber(row: Sequence[Any]) -> SubscriberRecord:
    """The record of one ``_SELECT_RECORD`` row (built positionally: a page builds 500)."""
    (
        id_, email, first_name, last_name, zip_, phone, sms_enabled, briefings, puzzles,
        on_this_day, local, status, age_range, gender, gender_self, categories,
        consent_source, consent_collected_at, created_at, updated_at, confirmed_at,
        unsubscribed_at, bounced_at, profile_completed_at, confirm_token, unsubscribe_token,
        profile_token,
    ) = row  # fmt: skip
    # In SubscriberRecord's field order (SubscriberData's, then id);
    # tests/plugins/sql_store/test_sql_records.py checks the result equals the one built by
    # SubscriberRecord(...).
    return _build_record(
        (
            email, first_name, last_name, zip_, phone, bool(sms_enabled),
            _prefs(briefings, puzzles, on_this_day, local), status, age_range, gender,
            gender_self, _categories(categories), consent_source, consent_collected_at,
            created_at, updated_at, confirmed_at, unsubscribed_at, bounced_at,
            profile_completed_at, confirm_token, unsubscribe_token, profile_token, id_,
        )
    )  # fmt: skip


# Built once: every signup runs one. An address already stored inserts nothing and returns no
# id. ``announced_at`` stays NULL on insert: the signup itself is the first announcement.
_INSERT_COLUMNS = [
    column.name for column in subscribers.c if column.name not in ("id", "announced_at")
]
_INSERT = {
    # PostgreSQL enters the subscribers' horizon within the insert itself (no extra round trip).
    "postgresql": postgresql.insert(subscribers)
    .from_select(_INSERT_COLUMNS, _SUBSCRIBERS_HORIZON.row_entering(subscribers, _INSERT_COLUMNS))
    .on_conflict_do_nothing(index_elements=[subscribers.c.email])
    .returning(subscribers.c.id),
    "sqlite": insert_ignoring_duplicates(
        "sqlite", subscribers, index_elements=[subscribers.c.email]
    ).returning(subscribers.c.id),
}


def insert_subscriber_statement() -> Any:
    """PostgreSQL's signup insert (entering the horizon; ``id`` of a new row, none for an
    address already stored or with a suppression keyed by the parameter ``unless_suppressed``),
    for statements that add more to the same round trip."""
    return _GUARDED_INSERT_PG


def sqlite_insert_subscriber_statement() -> Any:
    """SQLite's signup insert with every column a parameter of its own name (to compile once):
    ``id`` of a new row, none for an address already stored."""
    return _INSERT["sqlite"].values({name: bindparam(name) for name in _INSERT_COLUMNS})


_GUARDED_INSERT_PG = (
    postgresql.insert(subscribers)
    .from_select(
        _INSERT_COLUMNS,
        _SUBSCRIBERS_HORIZON.row_entering(subscribers, _INSERT_COLUMNS).where(
            ~exists().where(suppressions.c.email_hmac == bindparam("unless_suppressed"))
        ),
    )
    .on_conflict_do_nothing(index_elements=[subscribers.c.email])
    .returning(subscribers.c.id)
)

_BY_EMAILS_IN = _SELECT_RECORD.where(subscribers.c.email.in_(bindparam("emails", expanding=True)))
_BY_EMAILS = {
    "sqlite": _BY_EMAILS_IN,
    "mysql": _BY_EMAILS_IN,
    "mariadb": _BY_EMAILS_IN,
    # One array parameter: the text (and the plan) is the same for any number of addresses.
    "postgresql": _SELECT_RECORD.where(
        subscribers.c.email == any_(bindparam("emails", type_=postgresql.ARRAY(Text)))
    ),
}
_BY_EMAILS_LOCKED = {dialect: query.with_for_update() for dialect, query in _BY_EMAILS.items()}
# Many new subscribers at once: an address already stored inserts nothing and returns nothing.
# PostgreSQL copies them into a table of the transaction's own first (.copy_rows).
_ADD_MANY_SQLITE = insert_ignoring_duplicates(
    "sqlite", subscribers, index_elements=[subscribers.c.email]
).returning(subscribers.c.email)
_STAGED = Table(
    "nc_subscribers_staged",
    MetaData(),
    *(Column(name, subscribers.c[name].type) for name in _INSERT_COLUMNS),
    prefixes=["TEMPORARY"],
    postgresql_on_commit="DROP",
)
_ADD_STAGED_PG = (
    postgresql.insert(subscribers)
    .from_select(_INSERT_COLUMNS, select(*_STAGED.c))
    .on_conflict_do_nothing(index_elements=[subscribers.c.email])
    .returning(subscribers.c.email)
)
_BY_EMAIL = _SELECT_RECORD.where(subscribers.c.email == bindparam("email"))
_BY_EMAIL_LOCKED = _BY_EMAIL.with_for_update()


# MySQL and MariaDB: the insert as it is, after entering the horizon; a duplicate address
# fails the one statement (upserts.is_duplicate_key).
_INSERT_MYSQL = insert(subscribers)


class SqlSubscribers(SqlRepository):
    def add(self, data: SubscriberData) -> SubscriberRecord | None:
        dialect = self.connection.dialect.name  # PostgreSQL's insert enters the horizon
        values = subscriber_columns(data)
        if is_mysql(dialect):
            new_id = self._add_mysql(values)
        else:
            new_id = self.connection.execute(_INSERT[dialect], values).scalar_one_or_none()
        if new_id is None:
            return None  # the address is already stored
        return SubscriberRecord(id=int(new_id), **subscriber_fields(data))

    def _add_mysql(self, values: dict[str, Any]) -> int | None:
        _SUBSCRIBERS_HORIZON.enter_insert(self.connection)
        try:
            return inserted_id(self.connection, _INSERT_MYSQL.values(**values))
        except sa_exc.IntegrityError as error:
            if is_duplicate_key(error):
                return None
            raise

    def get_by_email(self, email: str, *, lock: bool = False) -> SubscriberRecord | None:
        row = self.connection.execute(_BY_EMAIL_LOCKED if lock else _BY_EMAIL, {"email": email})
        return _subscriber(found) if (found := row.first()) else None

    def get_many_by_email(
        self, emails: Sequence[str], *, lock: bool = False
    ) -> dict[str, SubscriberRecord]:
        if not emails:
            return {}
        dialect = self.connection.dialect.name
        query = (_BY_EMAILS_LOCKED if lock else _BY_EMAILS)[dialect]
        rows = self.connection.execute(query, {"emails": list(emails)})
        return {record.email: record for record in map(_subscriber, rows)}

    def add_many(
        self, data: Sequence[SubscriberData], *, meanwhile: Callable[[], None] | None = None
    ) -> set[str]:
        """:meth:`SubscriberBatches.add_many`; ``meanwhile`` (which must not raise) is called
        at most once: while PostgreSQL stores the rows (see :func:`.copy_rows.copy_rows`), or
        after they are stored."""
        rows = [subscriber_columns(item) for item in data]
        if rows and is_mysql(self.connection.dialect.name):
            added = self._add_many_mysql(rows)
            if meanwhile is not None:
                meanwhile()
            return added
        if not rows or self.connection.dialect.name != "postgresql":
            added = (
                set(self.connection.execute(_ADD_MANY_SQLITE, rows).scalars()) if rows else set()
            )
            if meanwhile is not None:
                meanwhile()
            return added
        _SUBSCRIBERS_HORIZON.enter_insert(self.connection)  # once, before any id is drawn
        values = [
            [
                dumps_text(row[name]) if name == "categories" else row[name]
                for name in _INSERT_COLUMNS
            ]
            for row in rows
        ]
        try:
            # Straight in when no address is taken (an import's usual chunk); one taken since
            # the import looked fails the whole COPY, and the staged insert skips it.
            with self.connection.begin_nested():
                copy_rows(
                    self.connection, subscribers.name, _INSERT_COLUMNS, values, meanwhile=meanwhile
                )
            return {row["email"] for row in rows}
        except sa_exc.IntegrityError:
            pass
        self.connection.execute(CreateTable(_STAGED))
        copy_rows(self.connection, _STAGED.name, _INSERT_COLUMNS, values)
        added = set(self.connection.execute(_ADD_STAGED_PG).scalars())
        self.connection.execute(DropTable(_STAGED))
        return added

    def _add_many_mysql(self, rows: list[dict[str, Any]]) -> set[str]:
        """Many rows in one multi-row insert (MySQL, MariaDB); when an address is taken since
        the caller looked, which fails the whole statement, one row at a time."""
        _SUBSCRIBERS_HORIZON.enter_insert(self.connection)
        try:  # InnoDB undoes the whole statement when one of its rows fails
            self.connection.execute(_INSERT_MYSQL, rows)
            return {row["email"] for row in rows}
        except sa_exc.IntegrityError as error:
            if not is_duplicate_key(error):
                raise
        return {row["email"] for row in rows if self._add_mysql(row) is not None}

    def get_by_token(
        self, kind: TokenKind, token: str, *, lock: bool = False
    ) -> SubscriberRecord | None:
        query = _SELECT_RECORD.where(_TOKEN_COLUMNS[kind] == token)
        row = self.connection.execute(query.with_for_update() if lock else query).first()
        return _subscriber(row) if row else None

    def save(self, record: SubscriberRecord) -> None:
        values = subscriber_columns(record)
        values.pop("email")
        self.connection.execute(
            update(subscribers).where(subscribers.c.id == record.id).values(**values)
        )

    def delete(self, subscriber_id: int) -> bool:
        result = self.connection.execute(
            delete(subscribers).where(subscribers.c.id == subscriber_id)
        )
        return bool(result.rowcount)

    def list_page(
        self, *, status: str | None, after_id: int | None, limit: int
    ) -> list[SubscriberRecord]:
        query = _SELECT_RECORD.order_by(subscribers.c.id).limit(limit)
        if status is not None:
            query = query.where(subscribers.c.status == status)
        if after_id is not None:
            query = query.where(subscribers.c.id > after_id)
        query = _SUBSCRIBERS_HORIZON.bound(self.connection, query)
        return [_subscriber(row) for row in self.connection.execute(query).all()]

    def find_by_prefix(
        self, prefix: str, *, after_email: str | None, limit: int
    ) -> list[SubscriberRecord]:
        query = (
            _SELECT_RECORD.where(*prefix_range(subscribers.c.email, prefix, after=after_email))
            .order_by(subscribers.c.email)
            .limit(limit)
        )
        return [_subscriber(row) for row in self.connection.execute(query).all()]

    def scan(self, query: SubscriberQuery) -> SubscriberScan:
        return subscriber_scan.scan(self.connection, query, _select_record, _subscriber)

    def tally(self, flt: SubscriberFilter, *, budget: int) -> SubscriberTally:
        return subscriber_scan.tally(self.connection, flt, budget=budget)

    def count(self, *, status: str | None = None) -> int:
        query = select(func.count()).select_from(subscribers)
        if status is not None:
            query = query.where(subscribers.c.status == status)  # the (status, id) index
        return int(self.connection.scalar(query) or 0)

    def changes_per_day(self, *, first: date, last: date) -> list[SubscriberDay]:
        return changes_per_day(
            self.connection,
            created=subscribers.c.created_at,
            unsubscribed=subscribers.c.unsubscribed_at,
            bounced=subscribers.c.bounced_at,
            first=first,
            last=last,
        )

    def mark_announced(self, subscriber_id: int, *, at: datetime, unless_since: datetime) -> bool:
        last = func.coalesce(subscribers.c.announced_at, subscribers.c.created_at)
        result = self.connection.execute(
            update(subscribers)
            .where(subscribers.c.id == subscriber_id, last <= unless_since)
            .values(announced_at=at)
        )
        return bool(result.rowcount)


def subscriber_fields(data: SubscriberData) -> dict[str, Any]:
    """The dataclass fields of ``data`` as keyword arguments (shallow: prefs stays a record)."""
    return {name: getattr(data, name) for name in SubscriberData.__dataclass_fields__}


class SqlDeletions(SqlRepository):
    """Erasure evidence."""

    def add(
        self,
        *,
        email_hmac: str,
        previous_status: str | None,
        deleted_at: datetime,
        discarded_events: int,
        erased_messages: int,
    ) -> DeletionRecord:
        """Record an erasure."""
        return inserted_record(
            self.connection,
            deletions,
            DeletionRecord,
            email_hmac=email_hmac,
            previous_status=previous_status,
            deleted_at=deleted_at,
            discarded_events=discarded_events,
            erased_messages=erased_messages,
        )

    def find(self, email_hmac: str) -> list[DeletionRecord]:
        """Every erasure of the address with this keyed hash, oldest first."""
        rows = self.connection.execute(
            select(deletions).where(deletions.c.email_hmac == email_hmac).order_by(deletions.c.id)
        ).mappings()
        return [record_of(DeletionRecord, row) for row in rows]


class SqlContactMessages(SqlRepository):
    """The contact-form log, in arrival order, until its sender's address is erased."""

    def add(
        self, *, email: str, name: str | None, message: str, submitted_at: datetime
    ) -> ContactMessageRecord:
        """Append a message; ids grow with arrival order."""
        _MESSAGES_HORIZON.enter_insert(self.connection)
        return inserted_record(
            self.connection,
            contact_messages,
            ContactMessageRecord,
            email=email,
            name=name,
            message=message,
            submitted_at=submitted_at,
        )

    def list_page(self, *, after_id: int | None, limit: int) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages with id above ``after_id``, in id order."""
        query = select(contact_messages).order_by(contact_messages.c.id).limit(limit)
        if after_id is not None:
            query = query.where(contact_messages.c.id > after_id)
        query = _MESSAGES_HORIZON.bound(self.connection, query)
        rows = self.connection.execute(query).mappings()
        return [record_of(ContactMessageRecord, row) for row in rows]

    def list_page_desc(self, *, before_id: int | None, limit: int) -> list[ContactMessageRecord]:
        """Up to ``limit`` messages with id below ``before_id`` (``None``: from the newest),
        newest first. Keyset on the primary key, never OFFSET."""
        query = select(contact_messages).order_by(contact_messages.c.id.desc()).limit(limit)
        if before_id is not None:
            query = query.where(contact_messages.c.id < before_id)
        rows = self.connection.execute(query).mappings()
        return [record_of(ContactMessageRecord, row) for row in rows]

    def delete_from(self, email: str) -> int:
        """Erase every message sent from ``email`` (normalised, as stored); how many."""
        result = self.connection.execute(
            delete(contact_messages).where(contact_messages.c.email == email)
        )
        return int(result.rowcount)
