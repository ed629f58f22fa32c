"""Finding subscribers by what is stored about them: the values a subscriber repository's
:meth:`~.host.SubscriberRepository.scan` and :meth:`~.host.SubscriberRepository.tally` take and
return, and :func:`scan_in_order` / :func:`tally_in_order`, which implement both over any
iterable of subscribers in walk order (for a host store that cannot express a filter in its
query language).

Every walk is bounded: it examines at most ``budget`` subscribers, whatever the filter, so a
filter that matches few costs what one that matches many costs. A walk that runs out of budget
says where it stopped, and the next walk resumes there."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeAlias

from .records import SubscriberRecord

__all__ = [
    "SubscriberFilter",
    "SubscriberOrder",
    "SubscriberPosition",
    "SubscriberQuery",
    "SubscriberScan",
    "SubscriberTally",
    "position_of",
    "scan_in_order",
    "tally_in_order",
    "tally_walk",
]

#: ``signup``: by ``created_at`` then ``id``; ``address``: by ``email`` (code-point order).
SubscriberOrder = Literal["signup", "address"]
#: A place in a walk: ``(created_at, id)`` in signup order, ``(email,)`` in address order.
SubscriberPosition: TypeAlias = tuple[datetime, int] | tuple[str]


@dataclass(frozen=True)
class SubscriberFilter:
    """What the subscribers found must all have; ``None`` (or empty) fields do not filter.

    ``prefs`` pairs an :class:`~.records.EmailPrefs` field name with the cadence it must hold.
    ``address_prefix`` and ``name_prefix`` are lowercase; a name matches when the first or the
    last name starts with it, ignoring case. ``signed_up_from`` is inclusive and
    ``signed_up_before`` exclusive (naive UTC, as stored)."""

    status: str | None = None
    category: str | None = None
    prefs: tuple[tuple[str, str], ...] = ()
    sms: bool | None = None
    zip_prefix: str | None = None
    age_range: str | None = None
    signed_up_from: datetime | None = None
    signed_up_before: datetime | None = None
    address_prefix: str | None = None
    name_prefix: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The filter as plain JSON values (its set fields only; instants in ISO form), as a
        store keeps it: :meth:`from_json` reads it back equal."""
        kept: dict[str, Any] = {}
        for name, value in vars(self).items():
            if value is None or value == ():
                continue
            if isinstance(value, datetime):
                value = value.isoformat()
            elif name == "prefs":
                value = [list(pair) for pair in value]
            kept[name] = value
        return kept

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SubscriberFilter:
        """The filter :meth:`as_json` gave ``value`` for."""
        fields: dict[str, Any] = dict(value)
        for name in ("signed_up_from", "signed_up_before"):
            if fields.get(name) is not None:
                fields[name] = datetime.fromisoformat(fields[name])
        fields["prefs"] = tuple((str(a), str(b)) for a, b in fields.get("prefs", ()))
        return cls(**fields)

    def is_empty(self) -> bool:
        """True when the filter matches every subscriber."""
        return self == SubscriberFilter()

    def matches(self, record: SubscriberRecord) -> bool:
        """Whether ``record`` has everything this filter asks for: the reference every store's
        walk agrees with."""
        return (
            (self.status is None or record.status == self.status)
            and (self.category is None or self.category in record.categories)
            and all(getattr(record.prefs, name) == value for name, value in self.prefs)
            and (self.sms is None or record.sms_enabled is self.sms)
            and (self.zip_prefix is None or (record.zip or "").startswith(self.zip_prefix))
            and (self.age_range is None or record.age_range == self.age_range)
            and (self.signed_up_from is None or record.created_at >= self.signed_up_from)
            and (self.signed_up_before is None or record.created_at < self.signed_up_before)
            and (self.address_prefix is None or record.email.startswith(self.address_prefix))
            and (self.name_prefix is None or _name_starts(record, self.name_prefix))
        )


def _name_starts(record: SubscriberRecord, prefix: str) -> bool:
    return any(
        (name or "").lower().startswith(prefix) for name in (record.first_name, record.last_name)
    )


@dataclass(frozen=True)
class SubscriberQuery:
    """One bounded walk: subscribers in ``order`` (``descending`` reverses it), only those past
    ``after`` in walk direction (``None``: from the start), examining at most ``budget`` of
    them and keeping the first ``limit`` that match ``filter``."""

    filter: SubscriberFilter
    order: SubscriberOrder
    descending: bool
    after: SubscriberPosition | None
    limit: int
    budget: int


@dataclass(frozen=True)
class SubscriberScan:
    """What one walk found: ``items`` (at most ``limit``, in walk order) and, when the budget
    ran out before ``limit`` matched and subscribers were left unexamined, ``stopped_at``: the
    position of the last one examined, where the next walk goes on (``None`` otherwise)."""

    items: list[SubscriberRecord]
    stopped_at: SubscriberPosition | None

    def resume_after(self, limit: int, order: SubscriberOrder) -> SubscriberPosition | None:
        """Where a walk reading pages of ``limit`` in ``order`` goes on after this one: past
        its last item when it filled, where its budget stopped it, or ``None``: the walk has
        ended."""
        if len(self.items) == limit:
            return position_of(self.items[-1], order)
        return self.stopped_at


@dataclass(frozen=True)
class SubscriberTally:
    """How many of the first ``examined`` subscribers of :func:`tally_walk` match
    (``matched``), and how many that walk holds in all (``population``: exact when
    ``examined`` reaches it, else an estimate the store makes without counting, or ``None``
    when it cannot tell)."""

    matched: int
    examined: int
    population: int | None

    @property
    def exact(self) -> bool:
        """True when every subscriber of the walk was examined: ``matched`` is the count."""
        return self.population is not None and self.examined >= self.population

    def estimate(self) -> int | None:
        """The number matching: exact; or the share matched among those examined applied to
        the whole walk; or ``None`` when the walk's size is unknown (``matched`` is then a
        lower bound)."""
        if self.exact or self.examined == 0:
            return self.matched
        if self.population is None:
            return None
        return round(self.matched * self.population / self.examined)


def tally_walk(flt: SubscriberFilter, budget: int) -> SubscriberQuery:
    """The walk a tally of ``flt`` examines: the address range in address order when ``flt``
    has an address prefix (an index seek whose size has no cheap estimate), else its signup
    window newest first (sampling the newest)."""
    order: SubscriberOrder = "address" if flt.address_prefix is not None else "signup"
    return SubscriberQuery(flt, order, order == "signup", None, limit=0, budget=budget)


def position_of(record: SubscriberRecord, order: SubscriberOrder) -> SubscriberPosition:
    """Where ``record`` sits in a walk in ``order``."""
    return (record.created_at, record.id) if order == "signup" else (record.email,)


def scan_in_order(walk: Iterable[SubscriberRecord], query: SubscriberQuery) -> SubscriberScan:
    """:meth:`~.host.SubscriberRepository.scan` over ``walk``: the subscribers past
    ``query.after`` in the query's order and direction (it reads at most one more than
    ``query.budget``, to tell whether any were left)."""
    items: list[SubscriberRecord] = []
    last: SubscriberRecord | None = None
    for examined, record in enumerate(walk):
        if examined == query.budget:
            assert last is not None  # a budget of 0 examines nothing
            return SubscriberScan(items, position_of(last, query.order))
        last = record
        if query.filter.matches(record):
            items.append(record)
            if len(items) == query.limit:
                break
    return SubscriberScan(items, None)


def tally_in_order(
    walk: Iterable[SubscriberRecord], flt: SubscriberFilter, *, budget: int, population: int | None
) -> SubscriberTally:
    """:meth:`~.host.SubscriberRepository.tally` over ``walk`` (the subscribers of
    :func:`tally_walk`, in its order; it reads at most ``budget``), given how many that walk
    holds (``population``; ``None``: unknown)."""
    matched = examined = 0
    for record in walk:
        if examined == budget:
            break
        examined, matched = examined + 1, matched + flt.matches(record)
    if examined < budget:
        population = examined
    return SubscriberTally(matched=matched, examined=examined, population=population)
