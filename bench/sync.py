"""Sync: deliver N queued events to a local HTTPS receiver in batches of 100.

Targets: at least 10,000 events/s, and at least 0.8x a bare httpx loop posting the same
batches to the same receiver.

    python -m bench.sync [--events 100000] [--repeat 3] [--database-url postgresql://...]

The receiver (``bench/https_receiver.py``, certificates from ``trustme``) runs in its own
process and counts the events and distinct ids it receives. Events (``contact.message``) are
queued through the service's outbox, then:

- baseline: one ``httpx.Client`` (keep-alive, verifying the receiver's CA) posts the same
  batches — the same 100 events in the same order, as the ``events`` transport's JSON objects
  (built before timing, encoded by httpx) — to the receiver, one after the other;
- ours: a :class:`SyncRunner` with the ``events`` transport delivers the whole backlog
  (claims of ten batches, each POSTed over its deadline-bounded client, settled with the next
  claim, which is taken while the current one is sent).

Before either loop is timed the database is settled (PostgreSQL: ``VACUUM ANALYZE`` and a
``CHECKPOINT``; SQLite: a WAL checkpoint), so that neither pays for maintenance the backlog
set off and that happens to start during it (autovacuum's pass over 100,000 new events took
a core for part of some runs). Afterwards the receiver must have seen every event id exactly
as many times as queued. The process's CPU time per batch, runner and bare loop, is printed
too.

The pair of loops is run ``--repeat`` times (each on a fresh database and backlog), every
pair's figures are printed, and the RESULT is the pair with the median ratio: on a 2-core
machine shared by the receiver, the database and the runner, one pair's ratio moved by
±0.1 from run to run (docs/contributing/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from bench.harness import ROOT, database, report
from newsletter_connector import NewsletterService, Settings
from newsletter_connector.plugins.sql_store.tables import outbox_events
from newsletter_connector.service.events import queue_event
from newsletter_connector.storage.outbox_records import OutboxEvent
from newsletter_connector.storage.transport import bearer_headers
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.timeutil import isoformat_z

TOKEN = "bench-platform-token-0123456789"
BATCH = 100
TARGET = ">= 10,000 events/s and ratio >= 0.8 (baseline: a bare httpx loop, same batches)"


def start_receiver(folder: Path) -> tuple[subprocess.Popen[str], str, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.https_receiver", str(folder)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    ready = process.stdout.readline().split()
    if not ready or ready[0] != "READY":
        process.kill()
        raise RuntimeError("the receiver did not start")
    return process, f"https://127.0.0.1:{ready[1]}", ready[2]


def queue(service: NewsletterService, count: int) -> None:
    for start in range(0, count, 1000):
        with service.storage.transaction() as uow:
            for n in range(start, min(start + 1000, count)):
                payload = {
                    "id": str(n),
                    "email": f"visitor{n}@example.org",
                    "name": "Vi Sitor",
                    "message": "Please cover the bus routes.",
                    "submitted_at": "2026-11-20T11:00:00Z",
                }
                queue_event(uow, service.context, "contact.message", payload)


def on_the_wire(event: OutboxEvent) -> dict[str, Any]:
    """A ``contact.message`` event as the ``events`` transport sends it."""
    return {
        "id": event.event_id,
        "type": event.event_type,
        "occurred_at": isoformat_z(event.occurred_at),
        "payload": event.payload,
    }


def queued_batches(service: NewsletterService) -> list[list[dict[str, Any]]]:
    """The backlog as the runner will batch it: oldest first, 100 per batch, on the wire."""
    o = outbox_events.c
    query = select(o.seq, o.event_id, o.event_type, o.occurred_at, o.payload).order_by(o.seq)
    with service.storage.engine.connect() as connection:  # type: ignore[attr-defined]
        events = [on_the_wire(OutboxEvent.with_payload(*row)) for row in connection.execute(query)]
    return [events[i : i + BATCH] for i in range(0, len(events), BATCH)]


def cpu_seconds() -> float:
    """CPU time of this process, every thread (the receiver is another process): unlike
    throughput, barely moved by other load on the machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def counts(client: httpx.Client, base: str) -> dict[str, Any]:
    return dict(client.get(base + "/counts").json())


@dataclass(frozen=True)
class Pair:
    """One run of both loops: events per second and this process's CPU per batch."""

    ours: float
    bare: float
    ours_cpu: float
    bare_cpu: float

    @property
    def ratio(self) -> float:
        return self.ours / self.bare


def settle_database(service: NewsletterService) -> None:
    """Finish the maintenance the backlog set off, before anything is timed."""
    engine = service.storage.engine  # type: ignore[attr-defined]
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("VACUUM ANALYZE")
            connection.exec_driver_sql("CHECKPOINT")
    else:
        with engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def run_pair(database_url: str | None, events: int) -> Pair | None:
    """Queue ``events``, time the bare loop and the runner over them; ``None`` (after saying
    what) when the receiver did not see every event exactly once from each."""
    backend = "postgresql" if database_url else "sqlite"
    with tempfile.TemporaryDirectory() as tmp, database(database_url) as url:
        receiver, base, ca_file = start_receiver(Path(tmp))
        os.environ["SSL_CERT_FILE"] = ca_file  # what the runner trusts (as in production)
        try:
            settings = Settings(database_url=url, base_url="https://bench.example", site_secret="b")
            service = NewsletterService.build(settings)
            began = time.perf_counter()
            queue(service, events)
            print(f"queued {events} events in {time.perf_counter() - began:.1f} s")
            batches = queued_batches(service)
            settle_database(service)

            with httpx.Client(verify=ca_file) as client:
                headers = bearer_headers(TOKEN)
                began, cpu_began = time.perf_counter(), cpu_seconds()
                for batch in batches:
                    client.post(base + "/bare/v1/events", json=batch, headers=headers)
                    # (raise_for_status outside the timing would hide nothing: all are 200)
                bare = events / (time.perf_counter() - began)
                bare_cpu = (cpu_seconds() - cpu_began) / len(batches)

                service.admin.set_connection(
                    platform_base=base + "/runner", transport="events", token=TOKEN
                )
                runner = SyncRunner(service, periodic_tasks=[])
                began, cpu_began = time.perf_counter(), cpu_seconds()
                delivered = 0
                while delivered < events:
                    done = runner.run_once().delivered_events
                    if done == 0:
                        break
                    delivered += done
                ours = delivered / (time.perf_counter() - began)
                ours_cpu = (cpu_seconds() - cpu_began) / len(batches)
                runner.close()
                seen = counts(client, base)
            service.close()
        finally:
            receiver.terminate()
            receiver.wait(10)
    got = seen.get("runner", {})
    print(f"database: {backend}; batches: {len(batches)}; receiver saw {seen}")
    print(
        f"CPU per batch (this process, all threads): runner {ours_cpu * 1000:.3f} ms, "
        f"bare loop {bare_cpu * 1000:.3f} ms"
    )
    if not got.get("events") == got.get("distinct") == delivered == events:
        print(f"MISSING: delivered {delivered}, receiver saw {got}")
        return None
    if seen.get("bare", {}).get("events") != events:
        print("MISSING: the baseline loop did not deliver every event")
        return None
    print(f"pair: runner {ours:,.0f} events/s, bare loop {bare:,.0f} events/s, ", end="")
    print(f"ratio {ours / bare:.2f}")
    return Pair(ours, bare, ours_cpu, bare_cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="pairs of loops run (default 3)")
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    pairs = []
    for _ in range(max(1, args.repeat)):
        pair = run_pair(args.database_url, args.events)
        if pair is None:
            return 1
        pairs.append(pair)
    median = sorted(pairs, key=lambda pair: pair.ratio)[len(pairs) // 2]
    print("ratios of every pair: " + ", ".join(f"{pair.ratio:.2f}" for pair in pairs))
    report(f"sync[{backend}]", median.ours, "events/s", baseline=median.bare, target=TARGET)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
