"""Benchmark: walk every analytics event through GET /api/export/events with limit=1000.

    python -m bench.export_walk [--size 1000000] [--database-url URL]

Runs on SQLite, or PostgreSQL given ``--database-url`` (or NEWSLETTER_TEST_DATABASE_URL).
Prints the walk rate in events/s through the HTTP surface (falcon TestClient, JSON included)
and the ratio to a baseline measured in the same run: the same walk through the service,
without HTTP. As in ``bench.subscriber_walk``, a page is timed until the app has answered;
the client's own decoding of each page is timed apart and printed as a second rate.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime

import falcon.testing

from bench.bulk_load import bulk_load, synthetic_events
from bench.harness import BENCH_WORKER, database, report
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.gunicorn_app import freeze_loaded_app
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine

TOKEN = "bench-export-token-0123456789"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="events to load")
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
        bulk_load(storage.engine, synthetic_events(args.size, datetime(2026, 1, 1), 30))
        with storage.transaction() as uow:
            uow.connections.replace(
                platform_base="https://platform.example", transport="events", token=TOKEN,
                at=datetime(2026, 1, 1),
            )  # fmt: skip

        began = time.perf_counter()
        cursor, seen = 0, 0
        while True:
            page = service.analytics.events_page(cursor, 1000)
            if not page.events:
                break
            seen += len(page.events)
            cursor = page.next_after_id
        baseline = time.perf_counter() - began

        client = falcon.testing.TestClient(create_app(service=service))
        freeze_loaded_app(BENCH_WORKER)  # as each gunicorn worker does once its app is built
        headers = {"Authorization": f"Bearer {TOKEN}"}
        cursor, walked, elapsed, decoding = 0, 0, 0.0, 0.0
        while True:
            began = time.perf_counter()
            result = client.simulate_get(
                "/api/export/events", headers=headers,
                params={"after_id": str(cursor), "limit": "1000"},
            )  # fmt: skip
            answered = time.perf_counter()
            body = result.json
            elapsed += answered - began
            decoding += time.perf_counter() - answered
            if not body["events"]:
                assert body["next_after_id"] == cursor
                break
            walked += len(body["events"])
            cursor = body["next_after_id"]
        assert walked == seen == args.size, (walked, seen, args.size)
        rate = walked / max(elapsed, 1e-9)
        print(f"walked {walked} events in {elapsed:.2f} s: {rate:,.0f} events/s over HTTP")
        print(
            f"with the client's JSON decoding (stdlib json, {decoding:.2f} s): "
            f"{walked / max(elapsed + decoding, 1e-9):,.0f} events/s"
        )
        print(
            f"baseline service walk: {seen / max(baseline, 1e-9):,.0f} events/s; "
            f"ratio {elapsed / max(baseline, 1e-9):.1f}x"
        )
        report(
            f"export_walk[{backend}]",
            rate,
            "events/s",
            baseline=seen / max(baseline, 1e-9),
            target=">= 100,000 events/s (baseline: the same walk through the service)",
        )
        storage.close()


if __name__ == "__main__":
    main()
