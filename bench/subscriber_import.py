"""Benchmark: importing a list of 1,000,000 new readers with their consent, and their events.

    python -m bench.subscriber_import [--rows 1000000] [--database-url URL]

Writes a CSV of ``--rows`` lines in the API's column names (email, names, ZIP, categories and
one consent provenance per line), then imports it in mode ``add`` as
``newsletter-connector subscribers import`` does: every line becomes a confirmed subscriber with
its ``newsletter.signup`` and ``newsletter.confirmed`` events. Reports lines imported per
second and the process's peak resident memory against its memory before the import: flat, since
a chunk holds at most ``CHUNK`` lines and nothing accumulates. On PostgreSQL, the floor in the
same run: the server's own ``COPY`` of the very rows the import wrote (its subscribers and
their events) into the same tables and indexes of a fresh database, one transaction; the target
is at least half of it.
Then imports the file again (every line unchanged, nothing queued) and reports that rate too.
Baseline, in the same run: the way in before an import existed, one ``POST /subscribers`` with
consent per reader (``service.subscribers.subscribe``) for ``BASELINE_ROWS`` other readers.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from sqlalchemy import Engine, Table, func, select

from bench.admin_bulk_job import resident_mib
from bench.harness import database, report
from newsletter_connector import NewsletterService, Settings
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.tables import outbox_events, subscribers
from newsletter_connector.service.importing import ImportOptions, ImportSource

#: The share of the COPY floor an import reaches at least (PostgreSQL).
TARGET_SHARE_OF_FLOOR = 0.5
BASELINE_ROWS = 5_000
HEADER = "email,first_name,last_name,zip,categories,consent_source,consent_collected_at\n"


def write_file(path: Path, rows: int) -> None:
    """``rows`` lines of distinct readers, each with its own consent."""
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        for n in range(rows):
            out.write(
                f"reader{n:07d}@example.org,Reader,Number {n},{n % 100_000:05d},"
                f"health;travel,spring fair {n % 7},2025-05-01T10:00:00Z\n"
            )


def copy_out(engine: Engine, table: Table, above: int) -> bytes:
    """The rows of ``table`` whose key is above ``above``, in ``COPY``'s text format."""
    key = next(iter(table.primary_key.columns)).name
    connection = engine.raw_connection()
    try:
        with connection.cursor() as cursor:  # type: ignore[attr-defined]
            query = f"COPY (SELECT * FROM {table.name} WHERE {key} > {int(above)}) TO STDOUT"
            with cursor.copy(query) as copy:
                return b"".join(bytes(data) for data in copy)
    finally:
        connection.close()


def copy_floor(server_url: str, rows: dict[str, bytes]) -> float:
    """Seconds the server takes to ``COPY`` ``rows`` (table name: text format) into a fresh
    migrated database and commit them, in one transaction."""
    with database(server_url) as url:
        engine = make_engine(url)
        connection = engine.raw_connection()
        try:
            began = time.perf_counter()
            with connection.cursor() as cursor:  # type: ignore[attr-defined]
                for name, data in rows.items():
                    with cursor.copy(f"COPY {name} FROM STDIN") as copy:
                        copy.write(data)
            connection.commit()
            seconds = time.perf_counter() - began
        finally:
            connection.close()
            engine.dispose()
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with tempfile.TemporaryDirectory() as folder, database(args.database_url) as url:
        path = Path(folder) / "readers.csv"
        write_file(path, args.rows)
        storage = BuiltinSqlStorage(make_engine(url))
        settings = Settings(
            database_url=url, base_url="https://bench.example", site_secret="bench-site-secret"
        )
        service = NewsletterService.build(settings, storage=storage)
        gc.freeze()  # as the command line does once its service is built
        importer = service.subscriber_import
        plan = importer.plan(ImportSource.from_path(path), ImportOptions())
        baseline_rows = min(BASELINE_ROWS, args.rows)
        consent = {"source": "spring fair", "collected_at": "2025-05-01T10:00:00Z"}
        began = time.perf_counter()
        for n in range(baseline_rows):
            service.subscribers.subscribe(
                {"email": f"signup{n:07d}@example.org", "consent": consent}
            )
        signup_rate = baseline_rows / (time.perf_counter() - began)
        memory = [resident_mib()]
        marks = iter(range(100_000, args.rows + 100_000, 100_000))
        mark = next(marks)

        def progress(line: int) -> None:
            nonlocal mark
            if line > mark:
                memory.append(resident_mib())
                print(f"  {line - 1:>9,} lines, {memory[-1]:7.1f} MiB resident")
                mark = next(marks, args.rows * 2)

        with storage.engine.connect() as connection:
            before = {
                table.name: connection.scalar(
                    select(func.coalesce(func.max(next(iter(table.primary_key.columns))), 0))
                )
                for table in (subscribers, outbox_events)
            }
        began = time.perf_counter()
        first = importer.run(plan, progress=progress)
        seconds = time.perf_counter() - began
        memory.append(resident_mib())
        if first.counts["added"] != args.rows:
            raise SystemExit(f"the import added {first.counts['added']} of {args.rows}")
        with storage.engine.connect() as connection:
            events = connection.scalar(select(func.count()).select_from(outbox_events))
        if events != 2 * (args.rows + baseline_rows):
            raise SystemExit(f"{events} events queued for {args.rows} readers")
        rate = args.rows / seconds
        floor_rate = None
        if args.database_url:
            written = {
                table.name: copy_out(storage.engine, table, before[table.name])
                for table in (subscribers, outbox_events)
            }
            floor_rate = args.rows / copy_floor(args.database_url, written)

        began = time.perf_counter()
        again = importer.run(plan)
        repeat_seconds = time.perf_counter() - began
        if again.counts["unchanged"] != args.rows:
            raise SystemExit(f"the repeat left {again.counts['unchanged']} of {args.rows} alone")
        print(
            f"import {args.rows:,} lines ({backend}): {seconds:.1f} s, {rate:,.0f} lines/s, "
            f"{events - 2 * baseline_rows:,} events; again: {repeat_seconds:.1f} s; one signup "
            f"at a time {signup_rate:,.0f}/s; resident memory "
            f"{min(memory):.1f} to {max(memory):.1f} MiB"
        )
        report(
            f"import_lines_per_s[{backend}]",
            rate,
            "lines/s",
            baseline=signup_rate,
            target="many times one signup at a time",
        )
        if floor_rate is not None:
            report(
                f"import_against_copy_floor[{backend}]",
                rate,
                "lines/s",
                baseline=floor_rate,
                target=f"ratio at least {TARGET_SHARE_OF_FLOOR}: the server's own COPY of the rows",
            )
        report(
            f"import_repeat_lines_per_s[{backend}]",
            args.rows / repeat_seconds,
            "lines/s",
            baseline=rate,
            target="faster than the first import: every line unchanged, nothing written",
        )
        report(
            f"import_peak_memory[{backend}]",
            max(memory),
            "MiB",
            baseline=memory[0],
            target="flat: the resident memory before the import",
        )
        storage.close()


if __name__ == "__main__":
    main()
