"""``service.dashboard``: the admin dashboard's figures, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.errors import InvalidRequest
from tests.support.analytics_helpers import TOKEN, clocked_service, connect

NOW = datetime(2026, 3, 31, 15, 0)
CONSENT = {"source": "import", "collected_at": "2026-01-01T00:00:00Z"}


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW - timedelta(days=2))


def test_counts_by_status_and_changes_for_every_day_of_the_range(clocked: Any) -> None:
    service, clock = clocked
    service.subscribers.subscribe({"email": "p@example.org"})
    service.subscribers.subscribe({"email": "c@example.org", "consent": CONSENT})
    service.subscribers.subscribe({"email": "u@example.org", "consent": CONSENT})
    clock.now = NOW
    service.subscribers.unsubscribe("u@example.org")
    service.subscribers.subscribe({"email": "b@example.org"})
    service.subscribers.mark_bounced("b@example.org")
    board = service.dashboard.overview(30)
    assert board.by_status == {"pending": 1, "confirmed": 1, "unsubscribed": 1, "bounced": 1}
    assert board.total == 4
    assert len(board.days) == 30
    assert board.days[0].day == date(2026, 3, 2) and board.days[-1].day == date(2026, 3, 31)
    figures = {d.day: (d.signups, d.unsubscribes, d.bounces) for d in board.days}
    assert figures[date(2026, 3, 29)] == (3, 0, 0)
    assert figures[date(2026, 3, 31)] == (1, 1, 1)
    assert sum(sum(f) for f in figures.values()) == 6
    assert len(service.dashboard.overview(90).days) == 90


@pytest.mark.parametrize("days", [0, 7, 31, 365])
def test_other_ranges_are_refused_naming_days(clocked: Any, days: int) -> None:
    with pytest.raises(InvalidRequest, match="days must be 30 or 90"):
        clocked[0].dashboard.overview(days)


def test_connection_state_leaves_out_the_token_and_credentials(clocked: Any) -> None:
    service, _ = clocked
    assert service.dashboard.overview().connection is None
    with service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://user:secret@platform.example.test/base",
            transport="events",
            token=TOKEN,
            at=NOW,
        )
    state = service.dashboard.overview().connection
    assert state is not None and state.transport == "events"
    assert "secret" not in repr(state) and TOKEN not in repr(state)
    assert state.platform == "https://platform.example.test/base"


def test_outbox_health_and_latest_issue(clocked: Any) -> None:
    service, clock = clocked
    board = service.dashboard.overview()
    assert board.latest_issue is None
    assert board.oldest_pending_age is None
    connect(service)
    service.subscribers.subscribe({"email": "p@example.org"})
    clock.now = NOW
    board = service.dashboard.overview()
    assert board.outbox.unbatched == 1
    assert board.oldest_pending_age == timedelta(days=2)
    assert (board.outbox.waiting_retry, board.outbox.last_delivered_at) == (0, None)


def test_subscriber_figures_are_kept_for_a_minute_then_counted_again(clocked: Any) -> None:
    service, clock = clocked
    clock.now = NOW
    service.subscribers.subscribe({"email": "a@example.org"})
    first = service.dashboard.overview(30)
    assert (first.total, first.counted_at) == (1, NOW)
    service.subscribers.subscribe({"email": "b@example.org"})
    clock.now = NOW + timedelta(seconds=59)
    kept = service.dashboard.overview(30)
    assert (kept.total, kept.counted_at, kept.now) == (1, NOW, NOW + timedelta(seconds=59))
    assert service.dashboard.overview(90).total == 2  # each range is kept on its own
    clock.now = NOW + timedelta(seconds=61)
    again = service.dashboard.overview(30)
    assert (again.total, again.counted_at) == (2, NOW + timedelta(seconds=61))


def test_while_one_view_counts_the_others_show_the_kept_figures(clocked: Any) -> None:
    service, clock = clocked
    clock.now = NOW
    service.dashboard.overview(30)
    service.subscribers.subscribe({"email": "a@example.org"})
    clock.now = NOW + timedelta(minutes=2)
    with service.storage.transaction() as uow:  # another view took the lease to count them
        uow.rate_limits.hit(
            "dashboard.subscriber_figures.30", now=clock.now, expires_at=clock.now + timedelta(1)
        )
    board = service.dashboard.overview(30)
    assert (board.total, board.counted_at) == (0, NOW)


def test_a_new_day_or_a_kept_value_of_another_shape_is_counted_again(clocked: Any) -> None:
    service, clock = clocked
    clock.now = NOW.replace(hour=23, minute=59, second=50)
    service.dashboard.overview(30)
    service.subscribers.subscribe({"email": "a@example.org"})
    clock.now = NOW.replace(hour=23, minute=59, second=59) + timedelta(seconds=2)
    board = service.dashboard.overview(30)
    assert board.total == 1 and board.days[-1].day == clock.now.date()
    with service.storage.transaction() as uow:
        uow.settings.put("dashboard.subscriber_figures.30", {"by_status": 3}, at=clock.now)
    assert service.dashboard.overview(30).counted_at == clock.now
