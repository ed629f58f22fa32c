"""Benchmark: the admin dashboard's figures over 1,000,000 subscribers.

    python -m bench.dashboard [--count 1000000] [--repeat 5] [--database-url URL]

Runs on SQLite, or on PostgreSQL given ``--database-url`` (or NEWSLETTER_TEST_DATABASE_URL; a
database is created and dropped). The subscribers joined over the last 365 days, a tenth of them
unsubscribed and a fiftieth bounced since. Times ``service.dashboard.overview`` for 30 and 90
days (median of ``--repeat`` runs each) against a baseline measured in the same run: one plain
``COUNT(*)`` of the subscribers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text

from bench.harness import database, report
from bench.subscriber_walk import bulk_load
from newsletter_connector import NewsletterService, Settings
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine

NOW = datetime(2026, 11, 25, 12, 0)
COLUMNS = (
    "email", "zip", "sms_enabled", "pref_briefings", "pref_puzzles", "pref_on_this_day",
    "pref_local", "status", "categories", "created_at", "updated_at", "unsubscribed_at",
    "bounced_at", "confirm_token", "unsubscribe_token", "profile_token",
)  # fmt: skip


def joined_over_a_year(count: int) -> Iterator[tuple[Any, ...]]:
    """``count`` subscribers spread evenly over the 365 days before :data:`NOW`."""
    step = timedelta(days=365) / max(count, 1)
    start = NOW - timedelta(days=365)
    for i in range(count):
        created = start + step * i
        status, unsubscribed, bounced = "confirmed", None, None
        if i % 10 == 0:
            status, unsubscribed = "unsubscribed", created + (NOW - created) / 2
        elif i % 50 == 1:
            status, bounced = "bounced", created + (NOW - created) / 3
        elif i % 7 == 0:
            status = "pending"
        yield (
            f"reader{i:07d}@example.org", f"{i % 100000:05d}", False, "daily", "weekly", "off",
            "daily", status, "[]", created, created, unsubscribed, bounced,
            f"c{i:031d}", f"u{i:031d}", f"p{i:031d}",
        )  # fmt: skip


def _median_seconds(call: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="subscribers to load")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each range")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("NEWSLETTER_TEST_DATABASE_URL") or None,
        help="PostgreSQL server URL (default: SQLite; or NEWSLETTER_TEST_DATABASE_URL)",
    )
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        settings = Settings(database_url=url, base_url="https://news.example/newsletter")
        service = NewsletterService.build(settings, storage=storage, clock=lambda: NOW)
        began = time.perf_counter()
        bulk_load(storage, args.count, rows=joined_over_a_year, columns=COLUMNS)
        print(f"loaded {args.count} subscribers in {time.perf_counter() - began:.2f} s")

        def count_all() -> None:
            with storage.engine.connect() as connection:
                connection.execute(text("SELECT COUNT(*) FROM nc_subscribers")).scalar_one()

        baseline = _median_seconds(count_all, args.repeat)
        board = service.dashboard.overview(90)
        if board.total != args.count:
            raise SystemExit(f"the dashboard counted {board.total} of {args.count} subscribers")
        signups = sum(day.signups for day in board.days)
        print(f"90 days: {signups} signups, {board.by_status}")
        for days in (30, 90):
            elapsed = _median_seconds(
                lambda days=days: service.dashboard.overview(days), args.repeat
            )
            print(f"overview({days}): {elapsed * 1000:.1f} ms; COUNT(*) {baseline * 1000:.1f} ms")
            report(
                f"dashboard{days}[{backend}]",
                elapsed,
                "s",
                baseline=baseline,
                target="< 0.3 s over 1,000,000 subscribers (baseline: one COUNT(*))",
            )
        storage.close()


if __name__ == "__main__":
    main()
