"""Migration 0002: analytics events stored before it get their UTC ``day`` filled
in, so their rollups are unchanged; and rollups over bounds that are not midnights still count
only the events inside them (the day column narrows, the time decides)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import upgrade
from newsletter_connector.plugins.sql_store.tables import analytics_events
from newsletter_connector.testing.databases import (
    postgres_server_url,
    temporary_postgres_database,
)

pytestmark = pytest.mark.system  # migrates databases down and up


@contextmanager
def empty_database(tmp_path: Path) -> Iterator[str]:
    server = postgres_server_url()
    if server:
        with temporary_postgres_database(server) as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path / 'before-0002.db'}"


def test_0002_fills_the_day_of_events_stored_before_it(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        upgrade(engine, "0001")
        with engine.begin() as connection:
            for at in (datetime(2026, 3, 1, 23, 59, 59, 999999), datetime(2026, 3, 2, 0, 0)):
                connection.execute(
                    text(
                        "INSERT INTO nc_analytics_events (occurred_at, event_type, visitor_id, "
                        "session_id, path, referrer) VALUES (:at, 'pageview', 'v', 's', '/', '')"
                    ),
                    {"at": at},
                )
        upgrade(engine)
        with engine.connect() as connection:
            days = connection.scalars(
                select(analytics_events.c.day).order_by(analytics_events.c.id)
            ).all()
        engine.dispose()
    assert days == [date(2026, 3, 1), date(2026, 3, 2)]


def test_traffic_between_bounds_that_are_not_midnights(newsletter_storage: Any) -> None:
    times = [datetime(2026, 3, 1, 5), datetime(2026, 3, 1, 12), datetime(2026, 3, 2, 1)]
    with newsletter_storage.transaction() as uow:
        for n, at in enumerate(times):
            uow.analytics.add_event(
                occurred_at=at, event_type="pageview", visitor_id=f"v{n}", session_id=f"s{n}",
                path="/a", referrer="", props=None, engaged_seconds=None,
            )  # fmt: skip
    with newsletter_storage.transaction(write=False) as uow:
        inside = uow.analytics.daily_traffic(
            datetime(2026, 3, 1, 6), datetime(2026, 3, 2, 0, 30), top_pages=5
        )
        whole = uow.analytics.daily_traffic(datetime(2026, 3, 1), datetime(2026, 3, 3), top_pages=5)
    assert inside["2026-03-01"].pageviews == 1
    assert "2026-03-02" not in inside or inside["2026-03-02"].pageviews == 0
    assert whole["2026-03-01"].pageviews == 2 and whole["2026-03-02"].pageviews == 1
    assert whole["2026-03-01"].unique_visitors == 2 and whole["2026-03-01"].sessions == 2
    assert whole["2026-03-01"].top_pages == (("/a", 2),)


def test_a_captured_event_stores_its_utc_day(newsletter_storage: Any) -> None:
    with newsletter_storage.transaction() as uow:
        uow.analytics.add_event(
            occurred_at=datetime(2026, 3, 1, 23, 59, 59), event_type="pageview", visitor_id="v",
            session_id="s", path="/", referrer="", props=None, engaged_seconds=None,
        )  # fmt: skip
    with newsletter_storage.engine.connect() as connection:
        assert connection.scalar(select(analytics_events.c.day)) == date(2026, 3, 1)
