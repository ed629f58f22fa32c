"""Benchmark: twenty editors on the admin dashboard beside the readers' traffic, on
PostgreSQL with 1,000,000 subscribers and 1,000,000 analytics events.

    python -m bench.admin_load --database-url URL [--count 1000000] [--events 1000000]
                               [--seconds 20] [--editors 20] [--workers 4]

The standalone app runs under gunicorn (``--workers`` sync workers). A paced load generator in
this process (asyncio, a few percent of a core at these rates) drives two kinds of reader
traffic, then the same two with the editors beside them. Each simulated client sends a whole
request on a new connection, reads the answer and pauses: requests arrive as a buffering
proxy in front of gunicorn hands them on (docs/security.md), so no sync worker waits on an
idle connection, which a closed-loop tool such as ``wrk`` with pauses would make it do.

- API: ``GET /api/newsletter/v1/subscribers/{email}`` with an API key, 8 clients, each
  pausing 50 ms between reads;
- reader page: ``GET /signup``, 4 clients, 50 ms apart;
- editors: ``GET /admin/?days=30`` signed in, ``--editors`` clients, each refreshing once a
  second (``--editor-pause``), for ``--seconds``.

Targets: the editors' 95th percentile under 1 s, and the API's and the reader page's median
and 95th percentile within 20% of theirs without the editors (each ratio printed; ``RESULT``
lines for the admin p95 and the API's p95 ratio).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from datetime import timedelta

import falcon.testing

from bench.admin_pages import PASSWORD, sign_in
from bench.bulk_load import bulk_load as load_events
from bench.bulk_load import synthetic_events
from bench.dashboard import COLUMNS, NOW, joined_over_a_year
from bench.harness import ROOT, database, gunicorn, report
from bench.subscriber_walk import bulk_load as load_subscribers
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.web.admin.gate import COOKIE_NAME

SECRET = "bench-admin-load-secret"
BASE_URL = "https://bench.example"


@dataclass(frozen=True)
class Target:
    """What some clients ask for: ``path`` with ``headers``, ``clients`` of them, each
    pausing ``pause`` seconds after each answer."""

    path: str
    clients: int
    pause: float
    headers: tuple[str, ...] = ()


async def _one(port: int, request: bytes) -> tuple[float, bool]:
    began = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()  # gunicorn's sync workers close after each answer
    writer.close()
    ok = answer.startswith((b"HTTP/1.1 2", b"HTTP/1.0 2"))
    return time.perf_counter() - began, ok


async def _client(port: int, target: Target, until: float, seen: list[float]) -> None:
    lines = [f"GET {target.path} HTTP/1.1", "Host: bench.example", "Connection: close"]
    request = "\r\n".join([*lines, *target.headers, "", ""]).encode()
    while time.perf_counter() < until:
        seconds, ok = await _one(port, request)
        if not ok:
            raise SystemExit(f"GET {target.path} failed")
        seen.append(seconds)
        await asyncio.sleep(target.pause)


def run(port: int, targets: dict[str, Target], seconds: float) -> dict[str, dict[str, float]]:
    """Every target's clients at once for ``seconds``: requests a second and latency
    percentiles (ms) of each."""

    async def everyone() -> dict[str, list[float]]:
        until = time.perf_counter() + seconds
        seen: dict[str, list[float]] = {name: [] for name in targets}
        await asyncio.gather(
            *(
                _client(port, target, until, seen[name])
                for name, target in targets.items()
                for _ in range(target.clients)
            )
        )
        return seen

    results = {}
    for name, latencies in asyncio.run(everyone()).items():
        ordered = sorted(latencies)

        def at(share: float, ordered: list[float] = ordered) -> float:
            return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000

        results[name] = {
            "rate": len(ordered) / seconds,
            "p50": at(0.50),
            "p95": at(0.95),
            "p99": at(0.99),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="PostgreSQL server URL")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--editors", type=int, default=20)
    parser.add_argument("--editor-pause", type=int, default=1000, help="ms between refreshes")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--warm", type=float, default=5, help="seconds of unmeasured load first")
    args = parser.parse_args(argv)
    with database(args.database_url) as url:
        storage = BuiltinSqlStorage(make_engine(url))
        began = time.perf_counter()
        load_subscribers(storage, args.count, rows=joined_over_a_year, columns=COLUMNS)
        start = NOW.replace(hour=0, minute=0) - timedelta(days=91)
        loaded = load_events(storage.engine, synthetic_events(args.events, start, 92))
        took = time.perf_counter() - began
        print(f"loaded {args.count} subscribers, {loaded} events in {took:.0f} s")
        settings = Settings(database_url=url, base_url=BASE_URL, site_secret=SECRET)
        service = NewsletterService.build(settings, storage=storage)
        key = service.admin.create_api_key("bench").key
        service.admin_access.create_user("bench", PASSWORD)
        session = sign_in(falcon.testing.TestClient(create_app(service=service)), "bench")
        service.close()
        env = {
            "NEWSLETTER_DATABASE_URL": url,
            "NEWSLETTER_BASE_URL": BASE_URL,
            "NEWSLETTER_SITE_SECRET": SECRET,
        }
        with gunicorn(
            "examples.standalone.wsgi:app", workers=args.workers, env=env, cwd=ROOT
        ) as base:
            port = int(base.rsplit(":", 1)[1])
            readers = {
                "api": Target(
                    f"/api/newsletter/v1/subscribers/reader{args.count // 2:07d}%40example.org",
                    8,
                    0.05,
                    (f"Authorization: Bearer {key}",),
                ),
                "reader page": Target("/signup", 4, 0.05),
            }
            editors = Target(
                "/admin/?days=30",
                args.editors,
                args.editor_pause / 1000,
                (f"Cookie: {COOKIE_NAME}={session}",),
            )
            run(port, {**readers, "editors": editors}, args.warm)  # workers, pools, figures
            alone = run(port, readers, args.seconds)
            beside = run(port, {**readers, "editors": editors}, args.seconds)
    for name, figures in {**alone, **{f"{k} (editors on)": v for k, v in beside.items()}}.items():
        print(
            f"{name:>24}: {figures['rate']:7.1f}/s  p50 {figures['p50']:7.1f} ms"
            f"  p95 {figures['p95']:7.1f} ms  p99 {figures['p99']:7.1f} ms"
        )
    for name in readers:
        print(
            f"{name}: median {beside[name]['p50'] / alone[name]['p50']:.2f}x, "
            f"p95 {beside[name]['p95'] / alone[name]['p95']:.2f}x with the editors on"
        )
    report(
        "admin_load_editors_p95[postgresql]",
        beside["editors"]["p95"],
        "ms",
        target=f"< 1,000 ms with {args.editors} editors refreshing every {args.editor_pause} ms",
    )
    report(
        "admin_load_api_p95[postgresql]",
        beside["api"]["p95"],
        "ms",
        baseline=alone["api"]["p95"],
        target="ratio <= 1.2 (baseline: the same API traffic without the editors)",
    )
    report(
        "admin_load_reader_p95[postgresql]",
        beside["reader page"]["p95"],
        "ms",
        baseline=alone["reader page"]["p95"],
        target="ratio <= 1.2 (baseline: the same reader traffic without the editors)",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
