"""The host's subscriber repository: ``SubscriberRepository`` on its own ``host_users`` table.

Maps the protocol's fields to the host's column names (``newsletter_status``, ``email_prefs``
as JSON, ``topics``) and never touches the host's other columns. It works on the connection of
the transaction it is given, so :mod:`.host_store` can swap it into the built-in store's unit of
work and a subscriber change commits (or rolls back) with the outbox event it causes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from datetime import date, datetime
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, RowMapping
from sqlalchemy.exc import IntegrityError

from newsletter_connector.storage.host_sql import (
    CommitHorizon,
    changes_per_day,
    prefix_range,
    walk_order,
    walk_where,
)
from newsletter_connector.storage.records import (
    EmailPrefs,
    SubscriberData,
    SubscriberDay,
    SubscriberRecord,
    TokenKind,
)
from newsletter_connector.storage.subscriber_query import (
    SubscriberFilter,
    SubscriberQuery,
    SubscriberScan,
    SubscriberTally,
    scan_in_order,
    tally_in_order,
    tally_walk,
)

from .host_db import host_users

# Keyset walks over host_users never pass an id whose insert has not committed yet: on
# PostgreSQL inserts enter the horizon and each page reads up to it (any unused lock id).
HOST_USERS_HORIZON = CommitHorizon(0x686F_7374_7573, host_users.c.id)  # "hostus"

_TOKEN_COLUMNS = {
    "confirm": host_users.c.confirm_token,
    "unsubscribe": host_users.c.unsubscribe_token,
    "profile": host_users.c.profile_token,
}
#: SubscriberData field -> host_users column, where the names differ.
_RENAMED = {"status": "newsletter_status", "categories": "topics", "prefs": "email_prefs"}


def _columns(data: SubscriberData) -> dict[str, Any]:
    """The host_users values of ``data`` (never the host's own columns)."""
    values = asdict(data)
    values.pop("id", None)
    values["categories"] = list(data.categories)
    return {_RENAMED.get(name, name): value for name, value in values.items()}


def _record(row: RowMapping) -> SubscriberRecord:
    prefs = row["email_prefs"]
    return SubscriberRecord(
        id=int(row["id"]),
        email=row["email"],
        first_name=row["first_name"],
        last_name=row["last_name"],
        zip=row["zip"],
        phone=row["phone"],
        sms_enabled=bool(row["sms_enabled"]),
        prefs=EmailPrefs(
            briefings=prefs["briefings"],
            puzzles=prefs["puzzles"],
            on_this_day=prefs["on_this_day"],
            local=prefs["local"],
        ),
        status=row["newsletter_status"],
        age_range=row["age_range"],
        gender=row["gender"],
        gender_self=row["gender_self"],
        categories=tuple(row["topics"] or ()),
        consent_source=row["consent_source"],
        consent_collected_at=row["consent_collected_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        confirmed_at=row["confirmed_at"],
        unsubscribed_at=row["unsubscribed_at"],
        bounced_at=row["bounced_at"],
        profile_completed_at=row["profile_completed_at"],
        confirm_token=row["confirm_token"],
        unsubscribe_token=row["unsubscribe_token"],
        profile_token=row["profile_token"],
    )


class HostSubscribers:
    """``SubscriberRepository`` on ``host_users`` (see :mod:`newsletter_connector.storage.host`)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def add(self, data: SubscriberData) -> SubscriberRecord | None:
        HOST_USERS_HORIZON.enter_insert(self.connection)  # a no-op on SQLite
        if self.get_by_email(data.email) is not None:
            return None
        savepoint = self.connection.begin_nested()
        try:
            new_id = self.connection.execute(
                insert(host_users).values(**_columns(data)).returning(host_users.c.id)
            ).scalar_one()
            savepoint.commit()
        except IntegrityError:  # the address (or a token) was just taken
            savepoint.rollback()
            return None
        fields = {name: getattr(data, name) for name in SubscriberData.__dataclass_fields__}
        return SubscriberRecord(id=int(new_id), **fields)

    def get_by_email(self, email: str, *, lock: bool = False) -> SubscriberRecord | None:
        return self._one(select(host_users).where(host_users.c.email == email), lock)

    def get_by_token(
        self, kind: TokenKind, token: str, *, lock: bool = False
    ) -> SubscriberRecord | None:
        return self._one(select(host_users).where(_TOKEN_COLUMNS[kind] == token), lock)

    def _one(self, query: Any, lock: bool) -> SubscriberRecord | None:
        if lock:
            query = query.with_for_update()
        row = self.connection.execute(query).mappings().first()
        return _record(row) if row else None

    def save(self, record: SubscriberRecord) -> None:
        values = _columns(record)
        values.pop("email")  # identity never changes; the host's own columns are left alone
        self.connection.execute(
            update(host_users).where(host_users.c.id == record.id).values(**values)
        )

    def delete(self, subscriber_id: int) -> bool:
        """Erasure removes the user's row: in this host, a user is a newsletter reader."""
        result = self.connection.execute(delete(host_users).where(host_users.c.id == subscriber_id))
        return bool(result.rowcount)

    def list_page(
        self, *, status: str | None, after_id: int | None, limit: int
    ) -> list[SubscriberRecord]:
        query = select(host_users).order_by(host_users.c.id).limit(limit)
        if status is not None:
            query = query.where(host_users.c.newsletter_status == status)
        if after_id is not None:
            query = query.where(host_users.c.id > after_id)
        query = HOST_USERS_HORIZON.bound(self.connection, query)
        return [_record(row) for row in self.connection.execute(query).mappings()]

    def find_by_prefix(
        self, prefix: str, *, after_email: str | None, limit: int
    ) -> list[SubscriberRecord]:
        query = (
            select(host_users)
            .where(*prefix_range(host_users.c.email, prefix, after=after_email))
            .order_by(host_users.c.email)
            .limit(limit)
        )
        return [_record(row) for row in self.connection.execute(query).mappings()]

    def scan(self, query: SubscriberQuery) -> SubscriberScan:
        """Reads the walk's rows in order and checks the filter in Python (the preferences are
        JSON here): at most one row beyond the budget, however few match."""
        return scan_in_order(self._walk(query, query.budget + 1), query)

    def tally(self, flt: SubscriberFilter, *, budget: int) -> SubscriberTally:
        walk = tally_walk(flt, budget)
        window = select(func.count()).select_from(host_users).where(*walk_where(host_users.c, walk))
        population = int(self.connection.scalar(window) or 0)  # a host's small table: counted
        return tally_in_order(self._walk(walk, budget), flt, budget=budget, population=population)

    def _walk(self, query: SubscriberQuery, rows: int) -> Iterator[SubscriberRecord]:
        walk = (
            select(host_users)
            .where(*walk_where(host_users.c, query))
            .order_by(*walk_order(host_users.c, query.order, query.descending))
            .limit(rows)
        )
        return (_record(row) for row in self.connection.execute(walk).mappings())

    def count(self, *, status: str | None = None) -> int:
        query = select(func.count()).select_from(host_users)
        if status is not None:
            query = query.where(host_users.c.newsletter_status == status)
        return int(self.connection.scalar(query) or 0)

    def changes_per_day(self, *, first: date, last: date) -> list[SubscriberDay]:
        return changes_per_day(
            self.connection,
            created=host_users.c.created_at,
            unsubscribed=host_users.c.unsubscribed_at,
            bounced=host_users.c.bounced_at,
            first=first,
            last=last,
        )

    def mark_announced(self, subscriber_id: int, *, at: datetime, unless_since: datetime) -> bool:
        last = func.coalesce(host_users.c.newsletter_announced_at, host_users.c.created_at)
        result = self.connection.execute(
            update(host_users)
            .where(host_users.c.id == subscriber_id, last <= unless_since)
            .values(newsletter_announced_at=at)
        )
        return bool(result.rowcount)
