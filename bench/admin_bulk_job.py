"""Benchmark: an act on all subscribers matching a filter, 100,000 of 1,000,000, as the sync
runner works through it.

    python -m bench.admin_bulk_job [--count 1000000] [--rows 100000] [--act unsubscribe]
                                   [--database-url URL]

Loads subscribers as ``bench.admin_subscriber_list`` does (one signup a minute), queues a job
on the ``--rows`` earliest signups (a signup-date filter; every one matches) and runs
``service.subscriber_jobs.work`` in slices of 5 s, as the runner's periodic task does, until
the job ends. Reports the rows acted on per second and the process's peak resident memory
against its memory before the job: flat, since a chunk holds at most ``CHUNK`` subscribers and
nothing accumulates.
Baseline, in the same run: the ticked rows' path (``subscriber_bulk.apply``, one transaction
per address, as the list's page of 50 uses) on 5,000 later signups.
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

from bench.admin_subscriber_list import COLUMNS, START, varied_rows
from bench.harness import database, report
from bench.subscriber_walk import bulk_load
from newsletter_connector import NewsletterService, Settings
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.service.subscriber_bulk import MAX_ADDRESSES
from newsletter_connector.storage.subscriber_query import SubscriberFilter

TARGET = "rows/s at least the ticked rows' path; memory flat"
SLICE_SECONDS = 5.0
BASELINE_ROWS = 5_000


def resident_mib() -> float:
    """This process's resident memory now, in MiB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * 4096 / 2**20


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--act", choices=("unsubscribe", "bounce", "erase"), default="unsubscribe")
    parser.add_argument(
        "--baseline-rows",
        type=int,
        default=BASELINE_ROWS,
        help="later signups the ticked rows' path acts on (default: %(default)s)",
    )
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    if args.rows + args.baseline_rows > args.count:
        parser.error("--count must exceed --rows by at least --baseline-rows")
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        began = time.perf_counter()
        bulk_load(storage, args.count, rows=varied_rows, columns=COLUMNS)
        print(f"loaded {args.count} subscribers in {time.perf_counter() - began:.1f} s ({backend})")
        settings = Settings(
            database_url=url, base_url="https://bench.example", site_secret="bench-site-secret"
        )
        service = NewsletterService.build(settings, storage=storage)

        # The baseline: the ticked rows' path, a page of addresses at a time.
        later = [
            f"reader{i:07d}@example.org" for i in range(args.rows, args.rows + args.baseline_rows)
        ]
        began = time.perf_counter()
        for start in range(0, len(later), MAX_ADDRESSES):
            service.subscriber_bulk.apply(args.act, later[start : start + MAX_ADDRESSES])
        ticked_rate = len(later) / (time.perf_counter() - began)

        window = SubscriberFilter(
            signed_up_from=START, signed_up_before=START + timedelta(minutes=args.rows)
        )
        job = service.subscriber_jobs.start(
            args.act,
            window,
            filter_text="bench",
            requested_by="bench",
            expected=args.rows,
            expected_exact=True,
        )
        memory = [resident_mib()]
        began = time.perf_counter()
        while service.subscriber_jobs.get(job.id).finished_at is None:
            service.subscriber_jobs.work(seconds=SLICE_SECONDS)
            memory.append(resident_mib())
            done = service.subscriber_jobs.get(job.id).done
            print(f"  {done:>9,} done, {memory[-1]:7.1f} MiB resident")
        seconds = time.perf_counter() - began
        finished = service.subscriber_jobs.get(job.id)
        if finished.done != args.rows or finished.missing:
            raise SystemExit(f"the job did {finished.done} of {args.rows}")
        rate = args.rows / seconds
        print(
            f"{args.act} {args.rows:,} of {args.count:,}: {seconds:.1f} s, {rate:,.0f} rows/s; "
            f"ticked rows' path {ticked_rate:,.0f} rows/s; resident memory "
            f"{min(memory):.1f} to {max(memory):.1f} MiB"
        )
        report(
            f"bulk_job_rows_per_s[{backend}]", rate, "rows/s", baseline=ticked_rate, target=TARGET
        )
        report(
            f"bulk_job_peak_memory[{backend}]",
            max(memory),
            "MiB",
            baseline=memory[0],
            target="flat: the resident memory before the job",
        )
        storage.close()


if __name__ == "__main__":
    main()
