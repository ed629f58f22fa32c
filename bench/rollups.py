"""Benchmark: 92 days of daily rollups over 1,000,000 analytics events, computed on demand.

    python -m bench.rollups [--size 1000000] [--days 92] [--database-url URL]

Runs on SQLite, or on PostgreSQL given ``--database-url`` (or NEWSLETTER_TEST_DATABASE_URL; a
database is created and dropped). Prints the load time, the rollup time, and the ratio to a baseline
measured in the same run: one plain ``COUNT(*)`` scan of the same range.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime, timedelta

from sqlalchemy import text

from bench.bulk_load import bulk_load, synthetic_events
from bench.harness import database, report
from newsletter_connector import NewsletterService, Settings
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine

START = datetime(2026, 1, 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="events to load")
    parser.add_argument("--days", type=int, default=92, help="days of rollups (1-92)")
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
        service = NewsletterService.build(settings, storage=storage)
        began = time.perf_counter()
        loaded = bulk_load(storage.engine, synthetic_events(args.size, START, args.days))
        print(f"loaded {loaded} events in {time.perf_counter() - began:.2f} s ({storage.dialect})")

        end = START + timedelta(days=args.days)
        began = time.perf_counter()
        with storage.engine.connect() as connection:
            connection.execute(
                text(
                    "SELECT COUNT(*) FROM nc_analytics_events "
                    "WHERE occurred_at >= :start AND occurred_at < :end"
                ),
                {"start": START, "end": end},
            ).scalar_one()
        baseline = time.perf_counter() - began

        began = time.perf_counter()
        rollups = service.analytics.rollups(START.date(), (end - timedelta(days=1)).date())
        elapsed = time.perf_counter() - began
        total = sum(r["pageviews"] + r["link_clicks"] for r in rollups)
        print(f"rollups: {len(rollups)} days in {elapsed:.3f} s ({total} pageviews + clicks)")
        print(
            f"baseline COUNT(*) scan: {baseline:.3f} s; ratio {elapsed / max(baseline, 1e-9):.1f}x"
        )
        report(
            f"rollups[{backend}]",
            elapsed,
            "s",
            baseline=baseline,
            target="< 1 s for 92 days over 1,000,000 events (baseline: one COUNT(*) of the range)",
        )
        storage.close()


if __name__ == "__main__":
    main()
