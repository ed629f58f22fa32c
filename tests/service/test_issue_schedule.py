"""Scheduled digests: daily from 10:00 UTC, weekly from Monday 10:00 UTC (ISO week), once per
period even with several runners; manual and test are never scheduled."""

from __future__ import annotations

import logging
import threading
import time
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import select

from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.tables import issues, outbox_events
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.digest_schedule import due_kinds, period_key
from newsletter_connector.testing.issue_samples import sample_issue_content

MONDAY = datetime(2026, 11, 16)  # ISO 2026-W47


class ContentPlugin:
    def __init__(self, *, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: list[tuple[str, str]] = []
        self.delay = delay
        self.fail = fail
        self.crash = False
        self.lock = threading.Lock()

    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        with self.lock:
            self.calls.append((kind, date))
        if self.delay:
            time.sleep(self.delay)
        if self.crash:
            raise RuntimeError("plugin bug")
        if self.fail:
            return sample_issue_content(topics="not a list")
        return sample_issue_content()


@pytest.fixture
def plugin() -> ContentPlugin:
    return ContentPlugin()


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin) -> Any:
    return NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, plugins=[plugin]
    )


def stored(service: NewsletterService) -> list[tuple[str, str, str | None]]:
    with service.storage.transaction(write=False) as uow:
        connection = uow.connection  # type: ignore[attr-defined]
        rows = connection.execute(
            select(issues.c.kind, issues.c.issue_date, issues.c.period_key).order_by(issues.c.id)
        )
        return [tuple(row) for row in rows]


@pytest.mark.parametrize(
    ("now", "kinds"),
    [
        (MONDAY + timedelta(hours=9, minutes=59, seconds=59), []),
        (MONDAY + timedelta(hours=10), ["daily", "weekly"]),
        (MONDAY + timedelta(hours=23, minutes=59), ["daily", "weekly"]),
        (MONDAY + timedelta(days=1, hours=9), ["weekly"]),  # the week has started
        (MONDAY + timedelta(days=1, hours=10), ["daily", "weekly"]),
        (MONDAY + timedelta(days=6, hours=23), ["daily", "weekly"]),  # Sunday
        (MONDAY + timedelta(days=7, hours=3), []),  # next Monday, before 10:00
    ],
)
def test_due_kinds(now: datetime, kinds: list[str]) -> None:
    assert due_kinds(now) == kinds


def test_due_kinds_takes_aware_times_as_utc() -> None:
    eastern = timezone(timedelta(hours=-5))
    assert due_kinds(datetime(2026, 11, 16, 4, 59, tzinfo=eastern)) == []
    assert due_kinds(datetime(2026, 11, 16, 5, 0, tzinfo=eastern)) == ["daily", "weekly"]


def test_period_keys() -> None:
    assert period_key("daily", date(2026, 11, 21)) == "daily:2026-11-21"
    assert period_key("weekly", date(2026, 11, 21)) == "weekly:2026-W47"
    assert period_key("weekly", date(2021, 1, 3)) == "weekly:2020-W53"
    assert period_key("manual", date(2026, 11, 21)) is None
    assert period_key("test", date(2026, 11, 21)) is None


def test_a_week_of_runner_loops(service: NewsletterService, plugin: ContentPlugin) -> None:
    run = service.issues.run_scheduled_digests
    assert run(MONDAY + timedelta(hours=9)) == []
    first = run(MONDAY + timedelta(hours=10))
    assert [(r.kind, r.issue_date, r.period_key) for r in first] == [
        ("daily", "2026-11-16", "daily:2026-11-16"),
        ("weekly", "2026-11-16", "weekly:2026-W47"),
    ]
    # The runner calls every few seconds: nothing more that day, and content is not re-asked.
    for minute in range(1, 60, 7):
        assert run(MONDAY + timedelta(hours=10, minutes=minute)) == []
    assert len(plugin.calls) == 2
    # The rest of the week: one daily a day, no second weekly.
    for day in range(1, 7):
        created = run(MONDAY + timedelta(days=day, hours=10, minutes=1))
        assert [(r.kind, r.issue_date) for r in created] == [
            ("daily", (MONDAY + timedelta(days=day)).date().isoformat())
        ]
    # Next Monday: a new daily and a new weekly.
    created = run(MONDAY + timedelta(days=7, hours=10))
    assert [r.period_key for r in created] == ["daily:2026-11-23", "weekly:2026-W48"]
    kinds = [row[0] for row in stored(service)]
    assert kinds.count("daily") == 8 and kinds.count("weekly") == 2
    assert "manual" not in kinds and "test" not in kinds


def test_late_runner_catches_up_within_the_period_only(service: NewsletterService) -> None:
    # Down from Monday to Wednesday afternoon: Wednesday's daily and the week's weekly are
    # recorded; Monday's and Tuesday's dailies are not back-filled.
    created = service.issues.run_scheduled_digests(MONDAY + timedelta(days=2, hours=15))
    assert [(r.kind, r.issue_date) for r in created] == [
        ("daily", "2026-11-18"),
        ("weekly", "2026-11-18"),
    ]
    assert service.issues.run_scheduled_digests(MONDAY + timedelta(days=4, hours=11))[0].kind == (
        "daily"
    )
    assert len(stored(service)) == 3


def test_an_operator_daily_run_counts_for_the_period(service: NewsletterService) -> None:
    service.issues.run_digest("daily", "2026-11-16")
    created = service.issues.run_scheduled_digests(MONDAY + timedelta(hours=10))
    assert [r.kind for r in created] == ["weekly"]


def test_manual_and_test_runs_do_not_count(service: NewsletterService) -> None:
    service.issues.run_digest("manual", "2026-11-16")
    service.issues.run_digest("test", "2026-11-16")
    created = service.issues.run_scheduled_digests(MONDAY + timedelta(hours=10))
    assert [r.kind for r in created] == ["daily", "weekly"]


def test_a_failing_run_is_logged_and_retried_next_loop(
    service: NewsletterService, plugin: ContentPlugin, caplog: pytest.LogCaptureFixture
) -> None:
    plugin.fail = True
    with caplog.at_level(logging.ERROR, logger="newsletter_connector.service.issues"):
        assert service.issues.run_scheduled_digests(MONDAY + timedelta(hours=10)) == []
    messages = [r.getMessage() for r in caplog.records]
    assert any("scheduled daily digest for 2026-11-16 failed" in m for m in messages)
    assert any("scheduled weekly digest" in m for m in messages)
    assert "sections.topics must be an array" in caplog.text
    assert stored(service) == []
    plugin.fail = False
    assert len(service.issues.run_scheduled_digests(MONDAY + timedelta(hours=10, minutes=1))) == 2


def test_default_now_is_the_service_clock(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin
) -> None:
    service = NewsletterService.build(
        newsletter_settings,
        storage=newsletter_storage,
        plugins=[plugin],
        clock=lambda: MONDAY + timedelta(hours=11),
    )
    assert [r.kind for r in service.issues.run_scheduled_digests()] == ["daily", "weekly"]


RUNNERS = 4


def test_several_runners_record_each_period_once(
    newsletter_settings: Any, newsletter_database_url: str, newsletter_storage: Any
) -> None:
    """Runners on their own connections race for the same periods: the content is slow, so
    every runner passes the "already recorded?" check before any of them inserts."""
    plugin = ContentPlugin(delay=0.3)
    storages = [SqlStorage(make_engine(newsletter_database_url)) for _ in range(RUNNERS)]
    services = [
        NewsletterService.build(newsletter_settings, storage=s, plugins=[plugin]) for s in storages
    ]
    start = threading.Barrier(RUNNERS)
    results: list[list[Any]] = [[] for _ in range(RUNNERS)]
    errors: list[BaseException] = []

    def runner(index: int) -> None:
        try:
            start.wait(timeout=10)
            results[index] = services[index].issues.run_scheduled_digests(
                MONDAY + timedelta(hours=10)
            )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(RUNNERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for storage in storages:
        storage.close()
    assert errors == []
    created = sorted(r.period_key for result in results for r in result)
    assert created == ["daily:2026-11-16", "weekly:2026-W47"]
    assert len(plugin.calls) > 2  # the race really happened
    with newsletter_storage.transaction(write=False) as uow:
        connection = uow.connection
        keys = [row[0] for row in connection.execute(select(issues.c.period_key))]
        events = list(connection.execute(select(outbox_events.c.payload)))
    assert sorted(keys) == ["daily:2026-11-16", "weekly:2026-W47"]
    assert sorted(e[0]["kind"] for e in events) == ["daily", "weekly"]  # one event per issue


def test_a_crashing_plugin_does_not_stop_the_runner(
    service: NewsletterService, plugin: ContentPlugin, caplog: pytest.LogCaptureFixture
) -> None:
    plugin.crash = True
    with caplog.at_level(logging.ERROR, logger="newsletter_connector.service.issues"):
        assert service.issues.run_scheduled_digests(MONDAY + timedelta(hours=10)) == []
    assert "plugin bug" in caplog.text
    assert stored(service) == []
