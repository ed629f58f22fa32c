"""The part of the storage contract a host may supply: :class:`SubscriberRepository`, and
nothing else (hook ``newsletter_storage_backends``, setting ``storage_backend``; guide:
docs/plugins.md; helpers for a host's own table: :mod:`.host_sql`).

This is the smallest set that keeps the transactional outbox honest. A host's repository is
built on the unit of work's own database connection, so a subscriber change, the outbox events it
causes (``outbox.enqueue``), and the deletion records and suppressions it checks or writes all
commit or roll back in ONE transaction. Those other repositories stay built-in tables in the same
database (the built-in store's own classes), so the host never implements them: handing the host
the outbox too would only let the two halves of one change commit apart."""

from __future__ import annotations

from datetime import date, datetime
from typing import Protocol

from .records import SubscriberData, SubscriberDay, SubscriberRecord, TokenKind
from .subscriber_query import SubscriberFilter, SubscriberQuery, SubscriberScan, SubscriberTally


class SubscriberRepository(Protocol):
    """The subscriber list; emails passed in are already normalised (lowercase). Ids grow with
    creation order, and :meth:`list_page` never returns an id while a smaller one may still
    appear (uncommitted), so keyset walks on id never skip or repeat anyone."""

    def add(self, data: SubscriberData) -> SubscriberRecord | None:
        """Store a new subscriber; ``None`` (nothing stored) when the address is taken, also
        by a concurrent transaction."""

    def get_by_email(self, email: str, *, lock: bool = False) -> SubscriberRecord | None:
        """The subscriber with this address, or ``None``; ``lock`` holds a row lock until the
        transaction ends (for read-modify-write)."""

    def get_by_token(
        self, kind: TokenKind, token: str, *, lock: bool = False
    ) -> SubscriberRecord | None:
        """The subscriber whose ``kind`` link token is ``token``, or ``None``."""

    def save(self, record: SubscriberRecord) -> None:
        """Write every field of ``record`` (looked up by id) except ``id`` and ``email``."""

    def delete(self, subscriber_id: int) -> bool:
        """Erase the row; true if it existed."""

    def list_page(
        self, *, status: str | None, after_id: int | None, limit: int
    ) -> list[SubscriberRecord]:
        """Up to ``limit`` subscribers with id above ``after_id`` (``None``: all), in id order,
        only those with ``status`` when given. Keyset, never OFFSET."""

    def find_by_prefix(
        self, prefix: str, *, after_email: str | None, limit: int
    ) -> list[SubscriberRecord]:
        """Up to ``limit`` subscribers whose address starts with ``prefix`` (taken literally:
        ``%``, ``_`` and ``\\`` are ordinary characters; ``""`` matches all), in code-point
        order of the address (a Python sort, whatever the database's collation), only addresses
        above ``after_email`` when given. One range read of the unique email index (see
        :func:`~.host_sql.prefix_range`)."""

    def scan(self, query: SubscriberQuery) -> SubscriberScan:
        """One bounded walk (the admin's subscriber list): subscribers in ``query.order`` and
        direction, past ``query.after``, examining at most ``query.budget`` of them however
        few match, the first ``query.limit`` matching ``query.filter`` (its ``matches`` is the
        reference). A store that cannot filter in its query language walks its subscribers in
        order through :func:`~.subscriber_query.scan_in_order`."""

    def tally(self, flt: SubscriberFilter, *, budget: int) -> SubscriberTally:
        """How many of the first ``budget`` subscribers of
        :func:`~.subscriber_query.tally_walk` (``flt``'s signup window newest first, or its
        address range) match it, and how many that walk holds: exact when all were examined;
        else an estimate the store can make without counting, or ``None``. Bounded like
        :meth:`scan` (:func:`~.subscriber_query.tally_in_order` for a store that walks)."""

    def count(self, *, status: str | None = None) -> int:
        """How many subscribers there are (only those with ``status`` when given)."""

    def changes_per_day(self, *, first: date, last: date) -> list[SubscriberDay]:
        """The UTC days from ``first`` to ``last`` (inclusive) on which any subscriber was
        added, unsubscribed or bounced, in day order, with how many of each (days without any
        are left out). Set-based: one grouped index range read per timestamp."""

    def mark_announced(self, subscriber_id: int, *, at: datetime, unless_since: datetime) -> bool:
        """Record that the signup is announced again at ``at``, unless its last announcement
        (the last one recorded here, else ``created_at``) came after ``unless_since``; true
        when recorded. One conditional write: of concurrent calls, at most one recorded within
        any ``at - unless_since`` span gets true."""
