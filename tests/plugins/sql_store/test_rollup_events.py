"""One ``analytics.daily_rollup`` event per completed UTC day, queued exactly once
(docs/analytics.md, "Daily rollups")."""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from newsletter_connector import NewsletterService
from newsletter_connector.plugins.sql_store.tables import job_runs, outbox_events
from tests.support.analytics_helpers import clocked_service

FIRST_RUN = datetime(2026, 6, 10, 15, 30)


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, FIRST_RUN)


def queued_rollups(storage: Any) -> list[dict[str, Any]]:
    with storage.engine.connect() as connection:
        rows = connection.execute(
            select(outbox_events.c.event_type, outbox_events.c.payload).order_by(
                outbox_events.c.seq
            )
        ).all()
    assert {row.event_type for row in rows} <= {"analytics.daily_rollup"}
    return [row.payload for row in rows]


def test_first_run_starts_the_schedule_without_back_fill(clocked: Any) -> None:
    service, _ = clocked
    service.analytics.record_event(  # recorded before the first run: not back-filled
        "pageview", visitor_id="visitor-1", session_id="session-1", path="/"
    )
    assert service.analytics.queue_completed_day_rollups(FIRST_RUN) == 0
    assert queued_rollups(service.storage) == []


def test_each_completed_day_is_queued_once_with_the_rollup_payload(clocked: Any) -> None:
    service, clock = clocked
    service.analytics.queue_completed_day_rollups(FIRST_RUN)
    service.analytics.record_event(
        "pageview", visitor_id="visitor-1", session_id="session-1", path="/today"
    )
    service.analytics.record_llm_usage("model-x", True, 10, 2)
    next_day = datetime(2026, 6, 11, 0, 0, 1)
    clock.now = next_day
    assert service.analytics.queue_completed_day_rollups(next_day) == 1
    assert service.analytics.queue_completed_day_rollups(next_day) == 0
    (payload,) = queued_rollups(service.storage)
    assert payload == service.analytics.rollups(date(2026, 6, 10), date(2026, 6, 10))[0]
    assert payload["pageviews"] == 1 and payload["llm_usage"]["calls"] == 1

    later = datetime(2026, 6, 14, 9, 0)  # 11, 12 and 13 are complete; the 14th is not
    assert service.analytics.queue_completed_day_rollups(later) == 3
    dates = [p["date"] for p in queued_rollups(service.storage)]
    assert dates == ["2026-06-10", "2026-06-11", "2026-06-12", "2026-06-13"]
    quiet = queued_rollups(service.storage)[1]
    assert quiet["pageviews"] == 0 and quiet["top_pages"] == [] and quiet["ga4"] is None


def test_the_service_clock_is_the_default_now(clocked: Any) -> None:
    service, clock = clocked
    service.analytics.queue_completed_day_rollups()
    clock.now = FIRST_RUN + timedelta(days=2)
    assert service.analytics.queue_completed_day_rollups() == 2


def test_a_long_outage_catches_up_92_days_per_call(clocked: Any) -> None:
    service, _ = clocked
    service.analytics.queue_completed_day_rollups(FIRST_RUN)
    much_later = FIRST_RUN + timedelta(days=100)
    assert service.analytics.queue_completed_day_rollups(much_later) == 92
    assert service.analytics.queue_completed_day_rollups(much_later) == 8
    dates = [p["date"] for p in queued_rollups(service.storage)]
    assert len(dates) == len(set(dates)) == 100
    assert dates[0] == "2026-06-10" and dates[-1] == "2026-09-17"


def test_several_runners_at_once_queue_each_day_exactly_once(
    clocked: Any, newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service, _ = clocked
    service.analytics.queue_completed_day_rollups(FIRST_RUN)
    now = FIRST_RUN + timedelta(days=6)
    runners = [
        NewsletterService.build(newsletter_settings, storage=newsletter_storage) for _ in range(6)
    ]
    barrier = threading.Barrier(len(runners))
    counts: list[int] = []
    errors: list[BaseException] = []

    def run(runner: NewsletterService) -> None:
        try:
            barrier.wait()
            counts.append(runner.analytics.queue_completed_day_rollups(now))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(r,)) for r in runners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert sum(counts) == 6
    dates = [p["date"] for p in queued_rollups(newsletter_storage)]
    assert sorted(dates) == [(FIRST_RUN.date() + timedelta(days=n)).isoformat() for n in range(6)]
    with newsletter_storage.engine.connect() as connection:
        keys = connection.scalars(select(job_runs.c.job_key).order_by(job_runs.c.job_key)).all()
    assert keys == [f"rollup:{d}" for d in sorted(dates)]


def test_first_runs_racing_agree_on_the_start_day(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    runners = [
        NewsletterService.build(newsletter_settings, storage=newsletter_storage) for _ in range(4)
    ]
    barrier = threading.Barrier(len(runners))
    counts: list[int] = []

    def run(runner: NewsletterService, offset: int) -> None:
        barrier.wait()
        counts.append(runner.analytics.queue_completed_day_rollups(FIRST_RUN))

    threads = [threading.Thread(target=run, args=(r, n)) for n, r in enumerate(runners)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert counts == [0, 0, 0, 0]
    assert runners[0].analytics.queue_completed_day_rollups(FIRST_RUN + timedelta(days=1)) == 1
