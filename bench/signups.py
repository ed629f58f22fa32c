"""Signups: ``POST /api/newsletter/v1/subscribers``, each with its event committed.

Target: at least 1,000 signups/s — on SQLite in one process, and on PostgreSQL with four
concurrent clients under gunicorn.

    python -m bench.signups [--seconds 10]                     # SQLite, in one process
    python -m bench.signups --database-url postgresql://...    # PostgreSQL, gunicorn + wrk

SQLite: one process posts unique addresses through the real WSGI app (falcon's TestClient)
for ``--seconds``. PostgreSQL: gunicorn (``--workers`` sync workers, default 4) serves the
standalone app and ``wrk`` drives it with ``--clients`` connections (default 4), its Lua script
(``bench/signups.lua``) making every address unique. wrk rather than a Python thread pool: on
a 2-core machine a Python load generator would take a core from the server it measures; wrk
costs a fraction of that. Each gunicorn server first takes one unmeasured second of the same
load, so every worker has connected to the database before the clock starts.

Baseline, measured the same way in the same run against the same database: a bare falcon app
(``bench/bare_signup_app.py``) that commits the address and one event row per request with no
validation, key check or contact resource. Afterwards the benchmark checks that every
answered signup is stored with its ``newsletter.signup`` event.
"""

from __future__ import annotations

import argparse
import itertools
import time
import uuid

import falcon.testing
from sqlalchemy import func, select

from bench.bare_signup_app import create, create_tables
from bench.harness import ROOT, database, gunicorn, report, wrk_run
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.tables import outbox_events, subscribers

PATH = "/api/newsletter/v1/subscribers"
TARGET = ">= 1,000 signups/s (baseline: a bare app committing the same two rows)"


def post_for(client: falcon.testing.TestClient, seconds: float, headers: dict[str, str]) -> int:
    """Sign up unique addresses for ``seconds``; return how many were created (201)."""
    prefix = uuid.uuid4().hex[:8]
    deadline = time.perf_counter() + seconds
    for n in itertools.count():
        if time.perf_counter() >= deadline:
            return n
        result = client.simulate_post(
            PATH, json={"email": f"{prefix}-{n}@example.org"}, headers=headers
        )
        if result.status_code != 201:
            raise SystemExit(f"signup failed: {result.status_code} {result.text}")
    raise AssertionError("unreachable")


def prepared_service(url: str) -> tuple[NewsletterService, str]:
    """The service on ``url`` with an API key (returned) and the bare app's tables created."""
    settings = Settings(database_url=url, base_url="https://bench.example", site_secret="b")
    service = NewsletterService.build(settings)
    key = service.admin.create_api_key("bench").key
    create_tables(service.storage.engine)  # type: ignore[attr-defined]
    return service, key


def stored(url: str) -> tuple[int, int]:
    """Subscribers and queued ``newsletter.signup`` events in the database."""
    engine = make_engine(url)
    with engine.connect() as connection:
        people = connection.scalar(select(func.count()).select_from(subscribers)) or 0
        events = (
            connection.scalar(
                select(func.count())
                .select_from(outbox_events)
                .where(outbox_events.c.event_type == "newsletter.signup")
            )
            or 0
        )
    engine.dispose()
    return people, events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (PostgreSQL)")
    parser.add_argument("--clients", type=int, default=4, help="wrk connections (PostgreSQL)")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"

    with database(args.database_url) as url:
        service, key = prepared_service(url)
        auth = {"Authorization": f"Bearer {key}"}
        if backend == "sqlite":
            bare_client = falcon.testing.TestClient(create(url))
            began = time.perf_counter()
            bare = post_for(bare_client, args.seconds, {}) / (time.perf_counter() - began)
            client = falcon.testing.TestClient(create_app(service=service))
            began = time.perf_counter()
            made = post_for(client, args.seconds, auth)
            ours = made / (time.perf_counter() - began)
            how = "one process, in-process WSGI (falcon TestClient)"
        else:
            service.close()
            load = {
                "seconds": args.seconds,
                "connections": args.clients,
                "threads": min(2, args.clients),
                "script": ROOT / "bench" / "signups.lua",
            }
            env = {"BENCH_DATABASE_URL": url}
            with gunicorn("bench.bare_signup_app:app", workers=args.workers, env=env) as base:
                wrk_run(base + PATH, script_args=["bare-warm-up"], **{**load, "seconds": 1})
                bare, _ = wrk_run(base + PATH, script_args=["bare"], **load)
            env = {
                "NEWSLETTER_DATABASE_URL": url,
                "NEWSLETTER_BASE_URL": "https://bench.example",
                "NEWSLETTER_SITE_SECRET": "b",
            }
            with gunicorn("examples.standalone.wsgi:app", workers=args.workers, env=env) as base:
                wrk_run(
                    base + PATH,
                    headers=[f"Authorization: Bearer {key}"],
                    script_args=["ours-warm-up"],
                    **{**load, "seconds": 1},
                )
                ours, made = wrk_run(
                    base + PATH,
                    headers=[f"Authorization: Bearer {key}"],
                    script_args=["ours"],
                    **load,
                )
            how = f"gunicorn {args.workers} sync workers, wrk {args.clients} connections"
        people, events = stored(url)
        service.close()
    print(f"database: {backend}; {how}")
    print(f"signups answered: {made}; stored: {people} subscribers, {events} signup events")
    if people < made or events != people:
        print("MISSING: an answered signup is not stored with its event")
        return 1
    report(f"signups[{backend}]", ours, "signups/s", baseline=bare, target=TARGET)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
