"""Overhead: GET /api/newsletter/v1/status under gunicorn vs a bare falcon app (issue 10 #5).

Target: our endpoint (authenticating its key against the database on every request) serves at
least half the requests per second of a bare falcon app returning the same JSON, under the same
gunicorn settings.

    python -m bench.status_overhead [--seconds 10] [--workers 2] [--database-url URL]
"""

from __future__ import annotations

import argparse

from bench.harness import ROOT, database, gunicorn, report, wrk


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    load = {"seconds": args.seconds, "connections": args.connections, "threads": 2}
    path = "/api/newsletter/v1/status"

    with gunicorn("bench.bare_status_app:app", workers=args.workers) as base:
        bare = wrk(base + path, **load)

    with database(args.database_url) as url:
        from newsletter_connector import NewsletterService, Settings

        settings = Settings(database_url=url, base_url="https://bench.example", site_secret="bench")
        service = NewsletterService.build(settings)
        key = service.admin.create_api_key("bench").key
        service.close()
        env = {
            "NEWSLETTER_DATABASE_URL": url,
            "NEWSLETTER_BASE_URL": "https://bench.example",
            "NEWSLETTER_SITE_SECRET": "bench",
        }
        with gunicorn(
            "examples.standalone.wsgi:app", workers=args.workers, env=env, cwd=ROOT
        ) as base:
            ours = wrk(base + path, headers=[f"Authorization: Bearer {key}"], **load)

    backend = "postgresql" if args.database_url else "sqlite"
    report(f"status_overhead[{backend}]", ours, "req/s", baseline=bare, target="ratio >= 0.50")


if __name__ == "__main__":
    main()
