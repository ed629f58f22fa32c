"""Walk N subscribers through ``GET /api/newsletter/v1/subscribers`` by cursor.

Targets: at least 50,000 contacts/s in one process; the last page costs at most 1.2x the first;
the worker's memory does not grow with the list.

    python -m bench.subscriber_walk                      # 1,000,000 on a temporary SQLite file
    python -m bench.subscriber_walk --count 2000 --limit 50
    python -m bench.subscriber_walk --database-url postgresql://postgres@127.0.0.1:5432/postgres

Setup bulk-loads the rows straight into the table (``executemany`` on SQLite, ``COPY`` on
PostgreSQL), then the walk goes through the real WSGI app (``create_app`` + falcon's
TestClient, JSON included) with an API key. Results, each against a baseline from this run:

- walk rate in contacts/s; baseline: the same walk through the service (no HTTP, no JSON);
- last/first page: the median time of the first and last ``--sample`` pages, re-timed
  alternately (start, end, start, ...) so load from other processes falls on both alike;
- peak RSS of this process (the worker) over the whole walk; baseline: its peak over the
  first tenth of the walk (sampled after every page from /proc/self/statm).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import falcon.testing
from sqlalchemy import text

from bench.harness import BENCH_WORKER, database, report
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.gunicorn_app import freeze_loaded_app
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine

CHUNK = 20_000
STATUSES = ("confirmed", "confirmed", "confirmed", "pending", "unsubscribed")
COLUMNS = (
    "email", "zip", "sms_enabled", "pref_briefings", "pref_puzzles", "pref_on_this_day",
    "pref_local", "status", "categories", "created_at", "updated_at", "confirm_token",
    "unsubscribe_token", "profile_token",
)  # fmt: skip
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    """This process's resident set size now, in MiB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE / 2**20


def _sqlite_value(value: Any) -> Any:
    """How the SQL store writes a value to SQLite (timestamps as text, booleans as 0/1)."""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, bool):
        return int(value)
    return value


def rows(count: int) -> Iterator[tuple[Any, ...]]:
    start = datetime(2025, 1, 1)
    for i in range(count):
        created = start + timedelta(seconds=i)
        yield (
            f"reader{i:07d}@example.org", f"{i % 100000:05d}", False, "daily", "weekly", "off",
            "daily", STATUSES[i % len(STATUSES)], json.dumps(["health"] if i % 3 else []),
            created, created, f"c{i:031d}", f"u{i:031d}", f"p{i:031d}",
        )  # fmt: skip


def bulk_load(
    storage: BuiltinSqlStorage,
    count: int,
    rows: Callable[[int], Iterator[tuple[Any, ...]]] = rows,
    columns: tuple[str, ...] = COLUMNS,
) -> None:
    """``count`` subscribers from ``rows`` (values of ``columns``; the two timestamps after the
    first nine): ``COPY`` on PostgreSQL, one ``executemany`` per chunk on SQLite."""
    raw = storage.engine.raw_connection()
    try:
        cursor = raw.cursor()
        if storage.engine.dialect.name == "postgresql":
            # A million-row COPY outlasts the request-sized statement bound on a busy machine.
            cursor.execute("SET LOCAL statement_timeout = 0")
            sql = f"COPY nc_subscribers ({', '.join(columns)}) FROM STDIN"
            with cursor.copy(sql) as copy:
                for row in rows(count):
                    copy.write_row(row)
        else:
            cursor.execute("BEGIN")
            sql = (
                f"INSERT INTO nc_subscribers ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})"
            )
            chunk: list[tuple[Any, ...]] = []
            for row in rows(count):
                chunk.append(tuple(_sqlite_value(value) for value in row))
                if len(chunk) == CHUNK:
                    cursor.executemany(sql, chunk)
                    chunk.clear()
            cursor.executemany(sql, chunk)
            cursor.execute("COMMIT")
        raw.commit()
    finally:
        raw.close()
    analyze = "VACUUM ANALYZE" if storage.engine.dialect.name == "postgresql" else "ANALYZE"
    with storage.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(text(analyze))


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
    client: falcon.testing.TestClient, key: str, limit: int, pages: int
) -> tuple[list[float], list[str | None], int, float, float]:
    """Seconds per page, the cursor each page was fetched with, how many were returned, and
    the peak RSS over the first tenth of the pages and over all of them."""
    timings: list[float] = []
    cursors: list[str | None] = []
    returned = 0
    cursor: str | None = None
    early_peak = peak = rss_mib()
    while True:
        elapsed, body = fetch(client, key, limit, cursor)
        timings.append(elapsed)
        cursors.append(cursor)
        returned += len(body["data"])
        peak = max(peak, rss_mib())
        if len(timings) <= max(1, pages // 10):
            early_peak = peak
        cursor = body["next_cursor"]
        if cursor is None:
            return timings, cursors, returned, early_peak, peak


def service_walk(service: NewsletterService, limit: int) -> tuple[float, int]:
    """The baseline: the same walk through the service, no HTTP and no JSON."""
    began = time.perf_counter()
    cursor, seen = None, 0
    while True:
        page = service.subscribers.list_page(cursor=cursor, limit=limit)
        seen += len([service.subscribers.contact(record) for record in page.items])
        cursor = page.next_cursor
        if cursor is None:
            return time.perf_counter() - began, seen


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
    parser.add_argument("--count", type=int, default=1_000_000, help="subscribers to walk")
    parser.add_argument("--limit", type=int, default=500, help="page size (1-500)")
    parser.add_argument("--sample", type=int, default=50, help="pages at each end (median taken)")
    parser.add_argument("--database-url", "--postgres", help="PostgreSQL server URL")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        began = time.perf_counter()
        bulk_load(storage, args.count)
        setup = time.perf_counter() - began
        settings = Settings(
            database_url=url, base_url="https://bench.example/news", site_secret="bench-secret"
        )
        service = NewsletterService.build(settings, storage=storage)
        key = service.admin.create_api_key("bench").key
        client = falcon.testing.TestClient(create_app(service=service))
        pages = -(-args.count // args.limit)
        gc.collect()
        freeze_loaded_app(BENCH_WORKER)  # as each gunicorn worker does once its app is built
        timings, cursors, returned, early_peak, peak = walk(client, key, args.limit, pages)
        baseline_seconds, baseline_seen = service_walk(service, args.limit)  # as warm as ours
        sample = max(1, min(args.sample, len(timings) // 2))
        start_times, end_times = interleaved(
            client, key, args.limit, cursors[:sample], cursors[-sample:]
        )
        service.close()
    if not returned == baseline_seen == args.count:
        print(f"walk returned {returned}/{baseline_seen}, expected {args.count}", file=sys.stderr)
        return 1
    walked = sum(timings)
    first = statistics.median(start_times) * 1000
    last = statistics.median(end_times) * 1000
    print(f"database: {backend}")
    print(f"subscribers: {returned}  page size: {args.limit}  pages: {len(timings)}")
    print(f"setup (bulk load): {setup:.1f} s  walk: {walked:.1f} s")
    print(
        f"during the walk: first {sample} pages "
        f"{statistics.median(timings[:sample]) * 1000:.2f} ms/page, last {sample} pages "
        f"{statistics.median(timings[-sample:]) * 1000:.2f} ms/page (medians)"
    )
    print(f"re-timed alternately: start pages {first:.2f} ms/page, end pages {last:.2f} ms/page")
    print(f"ratio last/first: {last / first:.2f}")
    report(
        f"subscriber_walk[{backend}]",
        returned / walked,
        "contacts/s",
        baseline=baseline_seen / baseline_seconds,
        target=">= 50,000 contacts/s (baseline: the service walk without HTTP)",
    )
    report(
        f"subscriber_walk_last_page[{backend}]",
        last,
        "ms/page",
        baseline=first,
        target="ratio <= 1.2 (baseline: the first pages)",
    )
    report(
        f"subscriber_walk_peak_rss[{backend}]",
        peak,
        "MiB",
        baseline=early_peak,
        target="ratio ~1.0: no growth with the list (baseline: peak over the first tenth)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
