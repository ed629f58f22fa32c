"""The admin's subscriber list (docs/admin.md): pages of the subscribers matching a filter,
in signup or address order, both ways, and how many match.

Every read is bounded by :data:`BUDGET`: a page examines at most that many subscribers and a
count that many, whatever the filter and however large the list. A page whose walk runs out of
budget shows what it found and where to search further; a count beyond it is an estimate, and
says so."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from ..errors import InvalidRequest
from ..storage.records import SubscriberRecord
from ..storage.subscriber_query import (
    SubscriberFilter,
    SubscriberOrder,
    SubscriberPosition,
    SubscriberQuery,
    SubscriberScan,
    SubscriberTally,
    position_of,
)
from .context import ServiceContext

#: Subscribers one page or one count examines at most (bench: admin_subscriber_list).
BUDGET = 20_000
#: Subscribers :meth:`SubscriberListService.walk` reads per transaction.
WALK_PAGE = 1000
#: Separates a signup position's instant from its id in :func:`position_text`.
_ID_MARK = "~"


@dataclass(frozen=True)
class ListPage:
    """One page of the list, in display order.

    ``later`` / ``earlier``: where the pages after the last row and before the first one start
    (``None``: there is none); ``searched`` says whether the walk toward ``later`` (or, walking
    back, toward ``earlier``) ran out of budget before the page filled, so that link searches
    further rather than turning a page."""

    items: list[SubscriberRecord]
    later: SubscriberPosition | None
    earlier: SubscriberPosition | None
    searched: bool


@dataclass(frozen=True)
class MatchCount:
    """How many subscribers match: ``number``, exact, or (``exact`` false) estimated from the
    share among the ``examined`` newest, or (``number`` ``None``) at least ``at_least``: the
    matches among the first ``examined`` of an address range too large to look through."""

    number: int | None
    exact: bool
    examined: int
    at_least: int

    @classmethod
    def of(cls, tally: SubscriberTally) -> MatchCount:
        return cls(
            number=tally.estimate(),
            exact=tally.exact,
            examined=tally.examined,
            at_least=tally.matched,
        )


class SubscriberListService:
    """Reads of the subscriber list for the admin pages (all read-only)."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    def page(
        self,
        flt: SubscriberFilter,
        *,
        order: SubscriberOrder,
        descending: bool,
        start: SubscriberPosition | None = None,
        backwards: bool = False,
        limit: int = 50,
    ) -> ListPage:
        """The ``limit`` matches following ``start`` in the list's order (``None``: from the
        top), or, ``backwards``, the ``limit`` matches preceding it."""
        query = SubscriberQuery(
            flt, order, descending != backwards, start, limit=limit + 1, budget=BUDGET
        )
        with self.context.storage.transaction(write=False) as uow:
            scan = uow.subscribers.scan(query)
        items = scan.items[:limit]
        ahead: SubscriberPosition | None = None
        if len(scan.items) > limit:
            ahead = position_of(items[-1], order)
        elif scan.stopped_at is not None:
            ahead = scan.stopped_at
        behind = start
        if backwards:
            items.reverse()
            if items:
                behind = position_of(items[-1], order)
            return ListPage(items, later=behind, earlier=ahead, searched=_searched(scan, limit))
        if items and start is not None:
            behind = position_of(items[0], order)
        return ListPage(items, later=ahead, earlier=behind, searched=_searched(scan, limit))

    def count(self, flt: SubscriberFilter) -> MatchCount:
        """How many subscribers match ``flt``: exact when at most :data:`BUDGET` subscribers
        signed up in its signup window, else estimated."""
        with self.context.storage.transaction(write=False) as uow:
            return MatchCount.of(uow.subscribers.tally(flt, budget=BUDGET))

    def walk(self, flt: SubscriberFilter) -> Iterator[SubscriberRecord]:
        """Every subscriber matching ``flt`` who had signed up when the walk began, newest
        first, read :data:`WALK_PAGE` at a time, each page in a short read transaction of its
        own examining at most :data:`BUDGET` subscribers (an export streams it)."""
        after: SubscriberPosition | None = None
        while True:
            query = SubscriberQuery(flt, "signup", True, after, limit=WALK_PAGE, budget=BUDGET)
            with self.context.storage.transaction(write=False) as uow:
                scan = uow.subscribers.scan(query)
            yield from scan.items
            after = scan.resume_after(WALK_PAGE, "signup")
            if after is None:
                return


def _searched(scan: SubscriberScan, limit: int) -> bool:
    return len(scan.items) <= limit and scan.stopped_at is not None


def position_text(position: SubscriberPosition) -> str:
    """A position as it travels in the address bar: the address, or the signup instant and
    id (``2026-01-02T03:04:05.123456~42``)."""
    if len(position) == 1:
        return str(position[0])
    at, ident = position
    return f"{at.isoformat()}{_ID_MARK}{ident}"


def parse_position(text: str, order: SubscriberOrder, field: str) -> SubscriberPosition:
    """The position :func:`position_text` wrote for a list in ``order``; else
    :class:`InvalidRequest` naming ``field``."""
    if order == "address":
        if not 0 < len(text) <= 320:
            raise InvalidRequest(f"{field} is not a place in this list", field=field)
        return (text.strip().lower(),)
    at, mark, ident = text.rpartition(_ID_MARK)
    try:
        instant = datetime.fromisoformat(at)
        number = int(ident)
    except ValueError:
        raise InvalidRequest(f"{field} is not a place in this list", field=field) from None
    if not mark or instant.tzinfo is not None or not 0 < number < 2**63:
        raise InvalidRequest(f"{field} is not a place in this list", field=field)
    return (instant, number)
