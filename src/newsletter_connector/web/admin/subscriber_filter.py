"""The subscriber list's filter as it travels in the address bar: every field a query
parameter, so a filtered view can be bookmarked, each one checked and any mistake named.

``status``, ``category``, ``age``: one of the stored values. ``briefings``, ``puzzles``,
``on_this_day``, ``local``: a cadence. ``sms``: ``yes`` or ``no``. ``zip``: the first 1 to 5
digits. ``address`` and ``name``: what the address, or the first or last name, begins with.
``from`` and ``to``: signup days (UTC, both included). ``sort``: ``newest`` (the default),
``oldest``, ``address`` or ``address_desc``. ``after`` / ``before``: where a page starts, as
the list's links write it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TypeVar
from urllib.parse import urlencode

from ...errors import InvalidRequest
from ...model.contact import AGE_RANGES, CADENCES, CATEGORIES, EMAIL_PREF_FIELDS, STATUSES
from ...service.subscriber_list import parse_position, position_text
from ...storage.subscriber_query import SubscriberFilter, SubscriberOrder, SubscriberPosition

#: ``sort`` value -> (order, newest or last first).
SORTS: dict[str, tuple[SubscriberOrder, bool]] = {
    "newest": ("signup", True),
    "oldest": ("signup", False),
    "address": ("address", False),
    "address_desc": ("address", True),
}
#: The cadence filters' parameter names (an :class:`EmailPrefs` field each).
PREF_PARAMS = tuple(attribute for _wire, attribute in EMAIL_PREF_FIELDS)
#: Every parameter that belongs to the filter (kept by the pager's links and the bulk acts).
FILTER_PARAMS = (
    "status", "category", *PREF_PARAMS, "sms", "zip", "age", "from", "to", "address", "name",
)  # fmt: skip
T = TypeVar("T")
_ZIP_PREFIX = re.compile(r"^[0-9]{1,5}$")
_MAX_TEXT = 254


@dataclass
class ListRequest:
    """A parsed list request: the filter, the order, where the page starts, the filter's
    parameters as given (to refill the form and build links), and what was wrong with any
    of them (parameter -> message)."""

    filter: SubscriberFilter = field(default_factory=SubscriberFilter)
    sort: str = "newest"
    start: SubscriberPosition | None = None
    backwards: bool = False
    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def order(self) -> SubscriberOrder:
        return SORTS[self.sort][0]

    @property
    def descending(self) -> bool:
        return SORTS[self.sort][1]

    def query_string(self, **extra: str) -> str:
        """The filter and sort as query parameters, plus ``extra`` (empty values left out)."""
        params = {**self.values, "sort": self.sort, **extra}
        return urlencode({name: value for name, value in params.items() if value})

    def at(self, position: SubscriberPosition, *, backwards: bool) -> str:
        """The query string of the page starting at ``position`` (``backwards``: ending)."""
        return self.query_string(**{"before" if backwards else "after": position_text(position)})


#: The filter's parameters that may hold (the start of) an address or a name.
PEOPLE_PARAMS = ("address", "name")
#: What an erasure's audit entry holds in place of those parameters' values.
NOT_KEPT = "(not kept)"


def without_people(values: Mapping[str, str]) -> dict[str, str]:
    """``values`` with the address and name beginnings replaced by :data:`NOT_KEPT`: what an
    erasure's audit entry may keep of the filter (erasing forgets the address)."""
    return {
        name: NOT_KEPT if name in PEOPLE_PARAMS and value else value
        for name, value in values.items()
    }


def parse_list_request(params: Mapping[str, str]) -> ListRequest:
    """``params`` (the query string, one value each) as a :class:`ListRequest`."""
    values = {name: params.get(name, "").strip() for name in FILTER_PARAMS}
    request = ListRequest(values={name: value for name, value in values.items() if value})

    def pick(name: str, check: Callable[[str, str], T]) -> T | None:
        if not values[name]:
            return None
        try:
            return check(values[name], name)
        except InvalidRequest as problem:
            request.errors[name] = problem.message
            return None

    prefs = ((name, pick(name, _choice(CADENCES))) for name in PREF_PARAMS)
    first, last = pick("from", _day), pick("to", _day)
    if first and last and last < first:
        request.errors["to"] = "to must be on or after from"
    request.filter = SubscriberFilter(
        status=pick("status", _choice(STATUSES)),
        category=pick("category", _choice(CATEGORIES)),
        prefs=tuple((name, cadence) for name, cadence in prefs if cadence),
        sms=pick("sms", _yes_or_no),
        zip_prefix=pick("zip", _zip_prefix),
        age_range=pick("age", _choice(AGE_RANGES)),
        signed_up_from=datetime.combine(first, time()) if first else None,
        signed_up_before=_end_of(last),
        address_prefix=pick("address", _lowered_text),
        name_prefix=pick("name", _lowered_text),
    )
    sort = params.get("sort") or "newest"
    if sort in SORTS:
        request.sort = sort
    else:
        request.errors["sort"] = "sort must be one of: " + ", ".join(SORTS)
    _take_start(request, params)
    return request


def _take_start(request: ListRequest, params: Mapping[str, str]) -> None:
    after, before = params.get("after"), params.get("before")
    if after and before:
        request.errors["after"] = "give after or before, not both"
        return
    text, name = (before, "before") if before else (after, "after")
    if not text:
        return
    try:
        request.start = parse_position(text, request.order, name)
    except InvalidRequest as problem:
        request.errors[name] = problem.message
    request.backwards = name == "before"


def _bad(name: str, expected: str) -> InvalidRequest:
    return InvalidRequest(f"{name} must be {expected}", field=name)


def _choice(allowed: tuple[str, ...]) -> Callable[[str, str], str]:
    def check(value: str, name: str) -> str:
        if value not in allowed:
            raise _bad(name, "one of: " + ", ".join(allowed))
        return value

    return check


def _yes_or_no(value: str, name: str) -> bool:
    if value not in ("yes", "no"):
        raise _bad(name, "yes or no")
    return value == "yes"


def _zip_prefix(value: str, name: str) -> str:
    if not _ZIP_PREFIX.match(value):
        raise _bad(name, "the first 1 to 5 digits of a ZIP code")
    return value


def _day(value: str, name: str) -> date:
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
    except ValueError:
        pass
    raise _bad(name, "a date (YYYY-MM-DD)")


def _end_of(last: date | None) -> datetime | None:
    """The moment after the day ``last`` (``None``: no end, as on the last day there is,
    9999-12-31, which has no day after it)."""
    if last is None or last == date.max:
        return None
    return datetime.combine(last + timedelta(days=1), time())


def _lowered_text(value: str, name: str) -> str:
    if len(value) > _MAX_TEXT:
        raise _bad(name, f"at most {_MAX_TEXT} characters")
    return value.lower()
