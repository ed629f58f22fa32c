"""The admin pages' rollups: the export's figures, with each settled day computed once and
kept (``service.analytics.kept_rollups``), by the page's first reader or ahead of it by the
runner's periodic task (``keep_settled_rollups``)."""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, select

from newsletter_connector.errors import DbUnavailable, InvalidRequest
from newsletter_connector.plugins.sql_store.tables import day_rollups
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.analytics import SETTLE_AFTER
from newsletter_connector.testing.threads import run_together
from tests.service.test_rollups import add_issue
from tests.support.analytics_helpers import Clock, clocked_service, pageview

DAY0 = datetime(2028, 2, 26, 9, 0)


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> tuple[Any, Clock]:
    return clocked_service(newsletter_settings, newsletter_storage, DAY0)


def _traffic_on_five_days(service: Any, clock: Clock) -> None:
    for n in range(5):
        clock.now = DAY0 + timedelta(days=n)
        for visitor in range(n + 1):
            pageview(service, path=f"/story/{n}", visitor=f"visitor-{visitor}")
        service.analytics.record_event(
            "link click",
            visitor_id="visitor-0",
            session_id="session-1",
            path="/",
            href="https://elsewhere.example/",
        )
        service.analytics.record_llm_usage("m", n % 2 == 0, prompt_tokens=n)
        add_issue(service.storage, clock.now)


def _kept_days(service: Any) -> list[date]:
    with service.storage.engine.connect() as connection:
        return sorted(connection.scalars(select(day_rollups.c.day)))


def _count_computed(service: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[date, date]]:
    """The first and last day of each range ``service`` computes rollups for from now on."""
    computed: list[tuple[date, date]] = []
    real = service.analytics._rollups

    def counting(uow: Any, first: date, last: date) -> Any:
        computed.append((first, last))
        return real(uow, first, last)

    monkeypatch.setattr(service.analytics, "_rollups", counting)
    return computed


def _refuse_writes(service: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write transaction of ``service``'s store fails as a database that does not answer
    (reads still work) until ``monkeypatch.undo()``."""
    real = service.storage.transaction

    def no_writes(*, write: bool = True) -> Any:
        if write:
            raise DbUnavailable("the database is not answering")
        return real(write=False)

    monkeypatch.setattr(service.storage, "transaction", no_writes)


def test_kept_rollups_are_the_exports_and_keep_only_settled_days(
    clocked: tuple[Any, Clock],
) -> None:
    service, clock = clocked
    _traffic_on_five_days(service, clock)
    first, last = DAY0.date() - timedelta(days=1), DAY0.date() + timedelta(days=5)
    # Day 4 ended at midnight, less than the settling hour ago: computed, not kept.
    clock.now = datetime.combine(DAY0.date() + timedelta(days=5), datetime.min.time())
    clock.now += SETTLE_AFTER - timedelta(seconds=1)

    shown = service.analytics.kept_rollups(first, last)

    assert shown == service.analytics.rollups(first, last)
    assert [day["pageviews"] for day in shown] == [0, 1, 2, 3, 4, 5, 0]
    assert _kept_days(service) == [first + timedelta(days=n) for n in range(5)]
    # Read again, from what was kept: the same figures.
    assert service.analytics.kept_rollups(first, last) == shown

    clock.now += timedelta(seconds=1)  # now day 4 has settled too
    assert service.analytics.kept_rollups(first, last) == shown
    assert _kept_days(service) == [first + timedelta(days=n) for n in range(6)]


def test_a_kept_day_is_read_not_computed_again_while_unsettled_days_are(
    clocked: tuple[Any, Clock],
) -> None:
    service, clock = clocked
    pageview(service)
    clock.now = DAY0 + timedelta(days=2)
    day0, today = DAY0.date(), clock.now.date()
    assert [d["pageviews"] for d in service.analytics.kept_rollups(day0, today)] == [1, 0, 0]
    # An event stamped on a settled day (capture never stamps one; only a direct write can):
    # the export counts it, the kept figures do not change.
    with service.storage.transaction() as uow:
        uow.analytics.add_event(
            occurred_at=DAY0 + timedelta(hours=1),
            event_type="pageview",
            visitor_id="late",
            session_id="late",
            path="/",
            referrer="",
            props=None,
            engaged_seconds=None,
        )
    pageview(service)  # today, not settled: counted at once
    assert [d["pageviews"] for d in service.analytics.rollups(day0, today)] == [2, 0, 1]
    assert [d["pageviews"] for d in service.analytics.kept_rollups(day0, today)] == [1, 0, 1]


def test_kept_figures_leave_the_source_to_the_current_settings(
    clocked: tuple[Any, Clock], newsletter_settings: Any
) -> None:
    service, clock = clocked
    pageview(service)
    clock.now = DAY0 + timedelta(days=3)
    service.analytics.kept_rollups(DAY0.date(), DAY0.date())
    with service.storage.transaction(write=False) as uow:
        (figures,) = uow.day_rollups.kept(DAY0.date(), DAY0.date()).values()
    assert "source" not in figures
    moved = newsletter_settings.model_copy(update={"base_url": "https://moved.example/news"})
    other, _ = clocked_service(moved, service.storage, clock.now)
    (rollup,) = other.analytics.kept_rollups(DAY0.date(), DAY0.date())
    assert rollup["source"] == "moved.example"
    assert list(rollup)[:2] == ["date", "source"]
    assert rollup == other.analytics.rollups(DAY0.date(), DAY0.date())[0]


def test_kept_days_between_missing_ones_are_not_computed_again(
    clocked: tuple[Any, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, clock = clocked
    clock.now = DAY0 + timedelta(days=10)
    day0 = DAY0.date()
    service.analytics.kept_rollups(day0 + timedelta(days=2), day0 + timedelta(days=3))
    computed = _count_computed(service, monkeypatch)
    rollups = service.analytics.kept_rollups(day0, day0 + timedelta(days=10))
    assert [r["date"] for r in rollups] == [
        (day0 + timedelta(days=n)).isoformat() for n in range(11)
    ]
    assert computed == [
        (day0, day0 + timedelta(days=1)),
        (day0 + timedelta(days=4), day0 + timedelta(days=10)),
    ]


@pytest.mark.parametrize(
    ("first", "last", "message"),
    [
        (date(2028, 3, 2), date(2028, 3, 1), "to must be on or after from"),
        (date(2028, 1, 1), date(2028, 4, 2), "from..to may span at most 92 days"),
    ],
)
def test_kept_rollups_take_the_exports_range_rules(
    clocked: tuple[Any, Clock], first: date, last: date, message: str
) -> None:
    service, _ = clocked
    with pytest.raises(InvalidRequest) as refused:
        service.analytics.kept_rollups(first, last)
    assert (refused.value.message, refused.value.field) == (message, "to")
    assert _kept_days(service) == []


def test_a_failed_keep_is_logged_and_the_figures_still_shown(
    clocked: tuple[Any, Clock], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    service, clock = clocked
    pageview(service)
    clock.now = DAY0 + timedelta(days=3)
    _refuse_writes(service, monkeypatch)
    shown = service.analytics.kept_rollups(DAY0.date(), clock.now.date())
    assert [day["pageviews"] for day in shown] == [1, 0, 0, 0]
    assert "could not keep 3 settled days' rollups: the database is not answering" in caplog.text
    monkeypatch.undo()
    assert _kept_days(service) == []


def _midnight_after(day: int) -> datetime:
    """Midnight at the end of ``DAY0``'s date plus ``day`` days."""
    return datetime.combine(DAY0.date() + timedelta(days=day + 1), datetime.min.time())


def test_the_runner_task_keeps_each_settled_day_ahead_of_the_page_once(
    clocked: tuple[Any, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, clock = clocked
    _traffic_on_five_days(service, clock)
    # Day 4 ended less than the settling hour ago: days up to 3 are kept, 92 days back at most.
    clock.now = _midnight_after(4) + SETTLE_AFTER - timedelta(seconds=1)
    first = clock.now.date() - timedelta(days=91)
    assert service.analytics.keep_settled_rollups(clock.now) == 90
    kept = _kept_days(service)
    assert kept == [first + timedelta(days=n) for n in range(90)]
    assert kept[-1] == DAY0.date() + timedelta(days=3)
    assert service.analytics.keep_settled_rollups(clock.now) == 0  # once per settled day

    computed = _count_computed(service, monkeypatch)
    today = clock.now.date()
    shown = service.analytics.kept_rollups(first, today)
    assert computed == [(today - timedelta(days=1), today)]  # the page computes only the rest
    monkeypatch.undo()
    assert shown == service.analytics.rollups(first, today)

    clock.now += timedelta(seconds=1)  # day 4 has settled: the next call keeps just that day
    assert service.analytics.keep_settled_rollups(clock.now) == 1
    assert _kept_days(service)[-1] == DAY0.date() + timedelta(days=4)
    assert service.analytics.keep_settled_rollups(clock.now + timedelta(hours=5)) == 0


def test_runners_keeping_at_once_write_each_day_once(
    clocked: tuple[Any, Clock], newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service, clock = clocked
    _traffic_on_five_days(service, clock)
    now = _midnight_after(4) + SETTLE_AFTER
    runners = [
        NewsletterService.build(newsletter_settings, storage=newsletter_storage) for _ in range(4)
    ]
    counts: list[int] = []
    numbers = itertools.count()  # next() on it is atomic

    def keep() -> None:
        counts.append(runners[next(numbers)].analytics.keep_settled_rollups(now))

    assert run_together(keep, len(runners)) == []
    assert sorted(counts) == [0, 0, 0, 91]  # the 92 days up to today, less today
    assert len(_kept_days(service)) == 91
    # Later calls for the same settled day read only the job's claim, not the kept days.
    with newsletter_storage.engine.begin() as connection:
        connection.execute(delete(day_rollups))
    assert runners[0].analytics.keep_settled_rollups(now + timedelta(hours=3)) == 0
    assert _kept_days(service) == []
    assert service.analytics.kept_rollups(DAY0.date(), now.date()) == service.analytics.rollups(
        DAY0.date(), now.date()
    )


def test_a_failed_keep_by_the_task_is_tried_again_on_its_next_call(
    clocked: tuple[Any, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, clock = clocked
    pageview(service)
    clock.now = DAY0 + timedelta(days=3)
    _refuse_writes(service, monkeypatch)
    with pytest.raises(DbUnavailable):
        service.analytics.keep_settled_rollups(clock.now)
    monkeypatch.undo()
    assert _kept_days(service) == []
    assert service.analytics.keep_settled_rollups(clock.now) == 91
    assert _kept_days(service)[-1] == DAY0.date() + timedelta(days=2)
