"""Conformance of the subscriber repository's bounded walks (``scan``) and counts (``tally``):
every store agrees with :meth:`SubscriberFilter.matches`, in both orders and directions, and
never reads past its budget."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from ..model.contact import CATEGORIES
from ..storage.records import EmailPrefs, SubscriberRecord
from ..storage.subscriber_query import (
    SubscriberFilter,
    SubscriberOrder,
    SubscriberQuery,
    position_of,
)
from .conformance_base import NeedsStorage
from .subscriber_samples import T0, make_subscriber_data

STATUSES = ("pending", "confirmed", "unsubscribed", "bounced")
CADENCES = ("off", "daily", "weekly")
AGES = ("under_55", "55_64", "65_74", None)
FIRST_NAMES = ("Ada", "Élodie", "ada", "Ahmed", None, "a_b", "Zoë")

#: Filters each checked alone and in pairs against :meth:`SubscriberFilter.matches`.
FILTERS = {
    "status": SubscriberFilter(status="bounced"),
    "category": SubscriberFilter(category="money"),
    "pref": SubscriberFilter(prefs=(("puzzles", "weekly"),)),
    "two prefs": SubscriberFilter(prefs=(("briefings", "off"), ("local", "daily"))),
    "sms": SubscriberFilter(sms=True),
    "no sms": SubscriberFilter(sms=False),
    "zip": SubscriberFilter(zip_prefix="021"),
    "age": SubscriberFilter(age_range="65_74"),
    "from": SubscriberFilter(signed_up_from=T0 + timedelta(hours=10)),
    "window": SubscriberFilter(
        signed_up_from=T0 + timedelta(hours=5), signed_up_before=T0 + timedelta(hours=20)
    ),
    "address": SubscriberFilter(address_prefix="scan-1"),
    "name": SubscriberFilter(name_prefix="a"),
    "accented name": SubscriberFilter(name_prefix="élo"),
    "literal underscore": SubscriberFilter(name_prefix="a_"),
}


def _pair(first: SubscriberFilter, second: SubscriberFilter) -> SubscriberFilter:
    merged = {
        name: getattr(second, name) or getattr(first, name)
        for name in SubscriberFilter.__dataclass_fields__
    }
    merged["prefs"] = first.prefs + second.prefs
    merged["sms"] = first.sms if second.sms is None else second.sms
    return SubscriberFilter(**merged)


PAIRS = {
    f"{a} + {b}": _pair(FILTERS[a], FILTERS[b])
    for a, b in itertools.combinations(["status", "zip", "category", "sms", "window", "name"], 2)
}


def _people(count: int = 48) -> list[dict[str, Any]]:
    """Varied subscribers; every third pair shares a signup instant (ties broken by id)."""
    people = []
    for n in range(count):
        people.append(
            {
                "email": f"scan-{n:02d}@example.org",
                "status": STATUSES[n % 4],
                "categories": tuple(c for i, c in enumerate(CATEGORIES) if (n >> (i % 5)) & 1),
                "prefs": EmailPrefs(
                    briefings=CADENCES[n % 3],
                    puzzles=CADENCES[(n // 3) % 3],
                    on_this_day="daily",
                    local=CADENCES[(n // 2) % 3],
                ),
                "sms_enabled": n % 5 == 0,
                "zip": (None, "02134", "02199", "10001", "0213")[n % 5] if n % 5 != 4 else None,
                "age_range": AGES[n % 4],
                "first_name": FIRST_NAMES[n % 7],
                "last_name": "Ames" if n % 6 == 0 else "Brown",
                "created_at": T0 + timedelta(hours=(n // 2) if n % 6 < 2 else n),
            }
        )
    return people


def _order_key(order: SubscriberOrder) -> Any:
    return lambda record: position_of(record, order)


class SubscriberScanConformance(NeedsStorage):
    """``scan`` and ``tally`` of ``uow.subscribers``."""

    @pytest.fixture
    def stored(self, storage: Any) -> list[SubscriberRecord]:
        records = []
        with storage.transaction() as uow:
            for person in _people():
                data = make_subscriber_data(person.pop("email"), **person)
                record = uow.subscribers.add(data)
                assert record is not None
                records.append(record)
        return records

    def _walk_all(self, storage: Any, query: SubscriberQuery) -> tuple[list[SubscriberRecord], int]:
        """Every match, page by page, resuming where each walk stopped; and the walks made."""
        found: list[SubscriberRecord] = []
        walks = 0
        while True:
            with storage.transaction(write=False) as uow:
                scan = uow.subscribers.scan(query)
            walks += 1
            found.extend(scan.items)
            if len(scan.items) == query.limit:
                query = replace(query, after=position_of(scan.items[-1], query.order))
            elif scan.stopped_at is not None:
                query = replace(query, after=scan.stopped_at)
            else:
                return found, walks
            assert walks < 200, "the walk does not end"

    @pytest.mark.parametrize("name", [*FILTERS, *PAIRS])
    def test_scan_agrees_with_the_filter_page_by_page(
        self, storage: Any, stored: list[SubscriberRecord], name: str
    ) -> None:
        flt = {**FILTERS, **PAIRS}[name]
        orders: tuple[SubscriberOrder, ...] = ("signup", "address")
        for order, descending in itertools.product(orders, (True, False)):
            expected = sorted(
                (r for r in stored if flt.matches(r)), key=_order_key(order), reverse=descending
            )
            query = SubscriberQuery(flt, order, descending, None, limit=3, budget=7)
            found, walks = self._walk_all(storage, query)
            assert [r.email for r in found] == [r.email for r in expected], (order, descending)
            assert found == expected
            # Each walk either filled its page or examined its whole budget.
            assert walks <= len(expected) // 3 + len(stored) // 7 + 2

    def test_a_walk_reads_no_more_than_its_budget(
        self, storage: Any, stored: list[SubscriberRecord]
    ) -> None:
        nobody = SubscriberFilter(zip_prefix="999")
        newest = sorted(stored, key=_order_key("signup"), reverse=True)
        query = SubscriberQuery(nobody, "signup", True, None, limit=50, budget=10)
        with storage.transaction(write=False) as uow:
            first = uow.subscribers.scan(query)
            second = uow.subscribers.scan(replace(query, after=first.stopped_at))
            last = uow.subscribers.scan(replace(query, budget=len(stored)))
        assert first.items == [] and first.stopped_at == position_of(newest[9], "signup")
        assert second.stopped_at == position_of(newest[19], "signup")
        assert last.items == [] and last.stopped_at is None

    def test_a_page_that_fills_says_nothing_of_where_it_stopped(
        self, storage: Any, stored: list[SubscriberRecord]
    ) -> None:
        query = SubscriberQuery(SubscriberFilter(), "address", False, None, limit=5, budget=5)
        with storage.transaction(write=False) as uow:
            scan = uow.subscribers.scan(query)
        assert [r.email for r in scan.items] == sorted(r.email for r in stored)[:5]
        assert scan.stopped_at is None

    @pytest.mark.parametrize("name", ["status", "window", "status + window", "name", "address"])
    def test_tally_counts_exactly_within_its_budget(
        self, storage: Any, stored: list[SubscriberRecord], name: str
    ) -> None:
        flt = {**FILTERS, **PAIRS}[name]
        window = SubscriberFilter(
            signed_up_from=flt.signed_up_from,
            signed_up_before=flt.signed_up_before,
            address_prefix=flt.address_prefix,
        )
        in_window = [r for r in stored if window.matches(r)]
        with storage.transaction(write=False) as uow:
            tally = uow.subscribers.tally(flt, budget=1000)
        assert tally.exact
        assert tally.examined == tally.population == len(in_window)
        assert tally.matched == tally.estimate() == sum(flt.matches(r) for r in stored)

    def test_tally_beyond_its_budget_counts_the_newest_and_estimates(
        self, storage: Any, stored: list[SubscriberRecord]
    ) -> None:
        flt = SubscriberFilter(status="bounced")
        newest = sorted(stored, key=_order_key("signup"), reverse=True)[:20]
        with storage.transaction(write=False) as uow:
            tally = uow.subscribers.tally(flt, budget=20)
        assert not tally.exact
        assert tally.examined == 20
        assert tally.matched == sum(flt.matches(r) for r in newest)
        assert tally.population >= 20
        assert tally.estimate() == round(tally.matched * tally.population / 20)

    def test_tally_of_an_address_range_beyond_its_budget_walks_it_in_address_order(
        self, storage: Any, stored: list[SubscriberRecord]
    ) -> None:
        flt = SubscriberFilter(address_prefix="scan-", status="confirmed")
        first = sorted(stored, key=_order_key("address"))[:10]
        with storage.transaction(write=False) as uow:
            tally = uow.subscribers.tally(flt, budget=10)
        assert (tally.examined, tally.exact) == (10, False)
        assert tally.matched == sum(flt.matches(r) for r in first)
        # The range's size: unknown (the count is a lower bound), or what the store can tell.
        assert tally.population is None or tally.population >= 10
        assert (tally.estimate() is None) == (tally.population is None)
