"""The admin Subscribers page on N subscribers: prefix search pages and the CSV export.

Targets: a page of prefix search results costs about what one address lookup costs, at any
list size (the unique email index read as a range, never a scan); the export streams at least
20,000 rows/s with the worker's memory flat.

    python -m bench.admin_subscribers                    # 1,000,000 on a temporary SQLite file
    python -m bench.admin_subscribers --count 2000
    python -m bench.admin_subscribers --database-url postgresql://postgres@127.0.0.1:5432/postgres

Setup bulk-loads the rows as ``bench.subscriber_walk`` does. Results:

- prefix search: the median time of a 50-row page (first pages and "next" pages of prefixes
  spread over the list) through the service; baseline: the median ``get`` of one address;
- export: rows/s of the whole confirmed-subscriber CSV consumed chunk by chunk; baseline: the
  keyset walk alone (no CSV);
- peak RSS over the export; baseline: its peak over the first tenth of the rows.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench.harness import database, report
from bench.subscriber_walk import STATUSES, bulk_load, rss_mib
from newsletter_connector import NewsletterService, Settings
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.service.subscriber_export import confirmed_csv

PAGE = 50


def prefix_pages(service: NewsletterService, count: int, rounds: int) -> list[float]:
    """Seconds per page: a first page and the next page of prefixes across the list."""
    timings: list[float] = []
    for n in range(rounds):
        prefix = f"reader{(n * 7919) % count:07d}"[:-2]  # about 100 addresses each
        began = time.perf_counter()
        page = service.subscribers.find_by_prefix(prefix, None, PAGE)
        timings.append(time.perf_counter() - began)
        if page.next_cursor is not None:
            began = time.perf_counter()
            service.subscribers.find_by_prefix(prefix, page.next_cursor, PAGE)
            timings.append(time.perf_counter() - began)
    return timings


def lookups(service: NewsletterService, count: int, rounds: int) -> list[float]:
    timings: list[float] = []
    for n in range(rounds):
        began = time.perf_counter()
        service.subscribers.get(f"reader{(n * 7919) % count:07d}@example.org")
        timings.append(time.perf_counter() - began)
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="subscribers")
    parser.add_argument("--rounds", type=int, default=200, help="prefixes searched")
    parser.add_argument("--database-url", "--postgres", help="PostgreSQL server URL")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        bulk_load(storage, args.count)
        settings = Settings(
            database_url=url, base_url="https://bench.example/news", site_secret="bench-secret"
        )
        service = NewsletterService.build(settings, storage=storage)
        lookups(service, args.count, 20)  # warm up
        page_times = prefix_pages(service, args.count, args.rounds)
        lookup_times = lookups(service, args.count, args.rounds)

        began = time.perf_counter()
        walked = sum(1 for _ in service.subscribers.walk("confirmed"))
        walk_seconds = time.perf_counter() - began
        confirmed = sum(1 for i in range(args.count) if STATUSES[i % len(STATUSES)] == "confirmed")
        early_peak = peak = rss_mib()
        lines = 0
        began = time.perf_counter()
        for chunk in confirmed_csv(service.subscribers):
            lines += chunk.count(b"\r\n")
            peak = max(peak, rss_mib())
            if lines <= confirmed // 10:
                early_peak = peak
        export_seconds = time.perf_counter() - began
        service.close()
    if not walked == lines - 1 == confirmed:
        print(
            f"export wrote {lines - 1} rows, walk {walked}, expected {confirmed}", file=sys.stderr
        )
        return 1
    print(f"database: {backend}")
    print(f"subscribers: {args.count}  confirmed exported: {confirmed}")
    report(
        f"admin_prefix_page[{backend}]",
        statistics.median(page_times) * 1000,
        "ms/page",
        baseline=statistics.median(lookup_times) * 1000,
        target=f"a {PAGE}-row page within a few lookups, flat in the list size "
        "(baseline: one address lookup)",
    )
    report(
        f"admin_export[{backend}]",
        confirmed / export_seconds,
        "rows/s",
        baseline=walked / walk_seconds,
        target=">= 20,000 rows/s (baseline: the keyset walk without CSV)",
    )
    report(
        f"admin_export_peak_rss[{backend}]",
        peak,
        "MiB",
        baseline=early_peak,
        target="ratio ~1.0: no growth with the list (baseline: peak over the first tenth)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
