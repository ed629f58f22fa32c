"""The built-in store's analytics events, LLM usage and once-only job claims."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.testing.threads import run_together

T0 = datetime(2028, 2, 28, 23, 0, 0)


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def _event(uow: Any, at: datetime, **overrides: Any) -> int:
    values: dict[str, Any] = {
        "occurred_at": at,
        "event_type": "pageview",
        "visitor_id": "visitor-1",
        "session_id": "session-1",
        "path": "/",
        "referrer": "",
        "props": None,
        "engaged_seconds": None,
    }
    values.update(overrides)
    return int(uow.analytics.add_event(**values))


class TestSqlAnalytics:
    """The analytics, LLM usage, job claim and kept rollup repositories."""

    def test_analytics_events_round_trip_in_id_order(self, storage: Any) -> None:
        with storage.transaction() as uow:
            first = _event(uow, T0, props={"a": 1, "s": "x"})
            second = _event(
                uow,
                T0,
                event_type="engagement ping",
                engaged_seconds=2.5,
                path="/b",
                referrer="https://r.example/",
                props={"engaged_seconds": 2.5},
            )
        assert second > first
        with storage.transaction(write=False) as uow:
            events = uow.analytics.events_after(0, 10)
            assert [e.id for e in events] == [first, second]
            assert events[0].props == {"a": 1, "s": "x"}
            assert events[0].occurred_at == T0
            assert (events[1].engaged_seconds, events[1].referrer) == (2.5, "https://r.example/")
            assert [e.id for e in uow.analytics.events_after(first, 10)] == [second]
            assert uow.analytics.events_after(second, 10) == []
            assert [e.id for e in uow.analytics.events_after(0, 1)] == [first]

    def test_analytics_daily_traffic_buckets_by_utc_day(self, storage: Any) -> None:
        midnight = datetime(2028, 2, 29)
        with storage.transaction() as uow:
            _event(uow, midnight - timedelta(microseconds=1), visitor_id="visitor-a", path="/x")
            _event(uow, midnight, visitor_id="visitor-a", path="/x")
            _event(uow, midnight, visitor_id="visitor-b", session_id="session-2", path="/y")
            _event(uow, midnight, event_type="link click", props={"href": "https://e.example/"})
            _event(uow, midnight, event_type="engagement ping", engaged_seconds=4.0)
            _event(uow, midnight, event_type="engagement ping", engaged_seconds=8.0)
        with storage.transaction(write=False) as uow:
            days = uow.analytics.daily_traffic(
                T0 - timedelta(days=1), midnight + timedelta(days=1), top_pages=1
            )
        assert set(days) == {"2028-02-28", "2028-02-29"}
        before, leap = days["2028-02-28"], days["2028-02-29"]
        assert (before.pageviews, before.unique_visitors, before.new_visitors) == (1, 1, 1)
        assert before.avg_engagement_seconds is None
        assert (leap.pageviews, leap.unique_visitors, leap.sessions) == (2, 3, 2)
        assert (leap.new_visitors, leap.link_clicks) == (2, 1)
        assert leap.avg_engagement_seconds == pytest.approx(6.0)
        assert leap.top_pages == (("/x", 1),)  # tie broken by path, bounded to top_pages
        with storage.transaction(write=False) as uow:
            bare = uow.analytics.daily_traffic(midnight, midnight + timedelta(days=1), top_pages=0)
        assert bare["2028-02-29"].top_pages == ()
        assert bare["2028-02-29"].pageviews == 2  # counted whatever the top list keeps

    def test_analytics_daily_traffic_range_is_half_open(self, storage: Any) -> None:
        with storage.transaction() as uow:
            _event(uow, datetime(2028, 3, 1))
        with storage.transaction(write=False) as uow:
            assert uow.analytics.daily_traffic(T0, datetime(2028, 3, 1), top_pages=10) == {}

    def test_llm_usage_daily_by_model(self, storage: Any) -> None:
        with storage.transaction() as uow:
            uow.llm_usage.add(
                occurred_at=T0, model="b", ok=True, prompt_tokens=5, completion_tokens=1
            )
            uow.llm_usage.add(
                occurred_at=T0, model="a", ok=False, prompt_tokens=2, completion_tokens=0
            )
            uow.llm_usage.add(
                occurred_at=T0, model="b", ok=False, prompt_tokens=1, completion_tokens=1
            )
        with storage.transaction(write=False) as uow:
            usage = uow.llm_usage.daily_usage(T0, T0 + timedelta(hours=1))
        assert list(usage) == ["2028-02-28"]
        assert [
            (m.model, m.calls, m.failures, m.prompt_tokens, m.completion_tokens)
            for m in usage["2028-02-28"]
        ] == [("a", 1, 1, 2, 0), ("b", 2, 1, 6, 2)]

    def test_jobs_claim_once_and_latest(self, storage: Any) -> None:
        with storage.transaction() as uow:
            assert uow.jobs.latest("rollup:") is None
            assert uow.jobs.claim("rollup:2028-02-28", at=T0) is True
            assert uow.jobs.claim("rollup:2028-02-28", at=T0) is False
            assert uow.jobs.claim("rollup:2028-02-29", at=T0) is True
            assert uow.jobs.claim("other%:2099-01-01", at=T0) is True
        with storage.transaction(write=False) as uow:
            assert uow.jobs.latest("rollup:") == "rollup:2028-02-29"
            assert uow.jobs.latest("other%:") == "other%:2099-01-01"
            assert uow.jobs.latest("other") == "other%:2099-01-01"
            assert uow.jobs.latest("nothing") is None

    def test_jobs_claim_rolls_back_with_its_transaction(self, storage: Any) -> None:
        with pytest.raises(RuntimeError), storage.transaction() as uow:
            assert uow.jobs.claim("rollup:x", at=T0)
            raise RuntimeError("abort")
        with storage.transaction() as uow:
            assert uow.jobs.claim("rollup:x", at=T0) is True

    def test_jobs_concurrent_claims_have_one_winner(self, storage: Any) -> None:
        results: list[bool] = []

        def claim() -> None:
            with storage.transaction() as uow:
                results.append(uow.jobs.claim("race", at=T0))

        assert run_together(claim, 5) == []
        assert sorted(results) == [False, False, False, False, True]

    def test_day_rollups_keep_the_first_figures_of_each_day(self, storage: Any) -> None:
        day = T0.date()
        figures = {"date": day.isoformat(), "pageviews": 3, "avg": 1.25, "top": [{"p": "/ü"}]}
        with storage.transaction() as uow:
            uow.day_rollups.keep(day, figures, at=T0)
            uow.day_rollups.keep(day + timedelta(days=2), {"date": "later"}, at=T0)
        with storage.transaction() as uow:
            uow.day_rollups.keep(day, {"date": day.isoformat(), "pageviews": 99}, at=T0)
        with storage.transaction(write=False) as uow:
            assert uow.day_rollups.kept(day, day + timedelta(days=2)) == {
                day: figures,
                day + timedelta(days=2): {"date": "later"},
            }
            assert uow.day_rollups.kept(day + timedelta(days=1), day + timedelta(days=1)) == {}
            assert list(uow.day_rollups.kept(day + timedelta(days=2), day + timedelta(days=9))) == [
                day + timedelta(days=2)
            ]

    def test_day_rollups_concurrent_keeps_store_one(self, storage: Any) -> None:
        day = T0.date()

        def keep() -> None:
            with storage.transaction() as uow:
                uow.day_rollups.keep(day, {"date": day.isoformat()}, at=T0)

        assert run_together(keep, 4) == []
        with storage.transaction(write=False) as uow:
            assert uow.day_rollups.kept(day, day) == {day: {"date": day.isoformat()}}
