"""Walk N subscribers through the Newsletter API by cursor; per-page cost at the start vs the end.

Keyset pagination costs the same per page wherever the walk is; OFFSET would grow linearly.
Setup bulk-inserts the rows straight into the table (not through the API), then the walk goes
through the real WSGI app (``create_app`` + falcon's TestClient) with an API key.

    python -m bench.subscriber_walk                      # 100,000 on a temporary SQLite file
    python -m bench.subscriber_walk --count 2000 --limit 50
    python -m bench.subscriber_walk --postgres postgresql://postgres@127.0.0.1:5432/postgres

Prints the median time per page over the first and the last ``--sample`` pages of the walk, then
re-times those same pages alternately (start, end, start, ...) so that load from other processes
falls on both alike, and prints that ratio (end / start) as the figure.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import falcon.testing
from sqlalchemy import insert

from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import upgrade
from newsletter_connector.plugins.sql_store.tables import subscribers
from newsletter_connector.testing.databases import temporary_postgres_database

CHUNK = 5_000
STATUSES = ("confirmed", "confirmed", "confirmed", "pending", "unsubscribed")


@contextlib.contextmanager
def database(postgres: str | None) -> Iterator[str]:
    if postgres:
        with temporary_postgres_database(postgres) as url:
            yield url
    else:
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{Path(tmp) / 'walk.db'}"


def bulk_insert(storage: SqlStorage, count: int) -> None:
    start = datetime(2025, 1, 1)
    with storage.engine.begin() as connection:
        for offset in range(0, count, CHUNK):
            rows = []
            for i in range(offset, min(offset + CHUNK, count)):
                created = start + timedelta(seconds=i)
                rows.append(
                    {
                        "email": f"reader{i:07d}@example.org",
                        "zip": f"{i % 100000:05d}",
                        "sms_enabled": False,
                        "pref_briefings": "daily",
                        "pref_puzzles": "weekly",
                        "pref_on_this_day": "off",
                        "pref_local": "daily",
                        "status": STATUSES[i % len(STATUSES)],
                        "categories": ["health"] if i % 3 else [],
                        "created_at": created,
                        "updated_at": created,
                        "confirm_token": f"c{i:031d}",
                        "unsubscribe_token": f"u{i:031d}",
                        "profile_token": f"p{i:031d}",
                    }
                )
            connection.execute(insert(subscribers), rows)


def fetch(client: falcon.testing.TestClient, key: str, limit: int, cursor: str | None) -> Any:
    """One page request, timed: ``(seconds, json body)``."""
    params: dict[str, object] = {"limit": limit}
    if cursor:
        params["cursor"] = cursor
    began = time.perf_counter()
    result = client.simulate_get(
        "/api/newsletter/v1/subscribers",
        headers={"Authorization": f"Bearer {key}"},
        params=params,
    )
    elapsed = time.perf_counter() - began
    if result.status_code != 200:
        raise SystemExit(f"walk failed: {result.status_code} {result.text}")
    return elapsed, result.json


def walk(
    client: falcon.testing.TestClient, key: str, limit: int
) -> tuple[list[float], list[str | None], int]:
    """Seconds per page, the cursor each page was fetched with, and how many were returned."""
    timings: list[float] = []
    cursors: list[str | None] = []
    returned = 0
    cursor: str | None = None
    while True:
        elapsed, body = fetch(client, key, limit, cursor)
        timings.append(elapsed)
        cursors.append(cursor)
        returned += len(body["data"])
        cursor = body["next_cursor"]
        if cursor is None:
            return timings, cursors, returned


def interleaved(
    client: falcon.testing.TestClient,
    key: str,
    limit: int,
    starts: list[str | None],
    ends: list[str | None],
) -> tuple[list[float], list[float]]:
    """Re-fetch start and end pages alternately, so load from other processes hits both alike."""
    start_times: list[float] = []
    end_times: list[float] = []
    for start, end in zip(starts, ends, strict=True):
        start_times.append(fetch(client, key, limit, start)[0])
        end_times.append(fetch(client, key, limit, end)[0])
    return start_times, end_times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000, help="subscribers to walk")
    parser.add_argument("--limit", type=int, default=100, help="page size (1-500)")
    parser.add_argument("--sample", type=int, default=50, help="pages at each end (median taken)")
    parser.add_argument("--postgres", help="PostgreSQL server URL (a scratch database is made)")
    args = parser.parse_args(argv)
    with database(args.postgres) as url:
        engine = make_engine(url)
        upgrade(engine)
        storage = SqlStorage(engine)
        began = time.perf_counter()
        bulk_insert(storage, args.count)
        setup = time.perf_counter() - began
        settings = Settings(
            database_url=url, base_url="https://bench.example/news", site_secret="bench-secret"
        )
        service = NewsletterService.build(settings, storage=storage)
        key = service.admin.create_api_key("bench").key
        client = falcon.testing.TestClient(create_app(service=service))
        timings, cursors, returned = walk(client, key, args.limit)
        sample = max(1, min(args.sample, len(timings) // 2))
        start_times, end_times = interleaved(
            client, key, args.limit, cursors[:sample], cursors[-sample:]
        )
        service.close()
    if returned != args.count:
        print(f"walk returned {returned} subscribers, expected {args.count}", file=sys.stderr)
        return 1
    walk_first = statistics.median(timings[:sample]) * 1000
    walk_last = statistics.median(timings[-sample:]) * 1000
    first = statistics.median(start_times) * 1000
    last = statistics.median(end_times) * 1000
    print(f"database: {engine.dialect.name}")
    print(f"subscribers: {returned}  page size: {args.limit}  pages: {len(timings)}")
    print(f"setup (bulk insert): {setup:.1f} s  walk: {sum(timings):.1f} s")
    print(
        f"during the walk: first {sample} pages {walk_first:.2f} ms/page, "
        f"last {sample} pages {walk_last:.2f} ms/page (medians)"
    )
    print(f"re-timed alternately: start pages {first:.2f} ms/page, end pages {last:.2f} ms/page")
    print(f"ratio last/first: {last / first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
