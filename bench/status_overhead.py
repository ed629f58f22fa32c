"""Overhead: GET /api/newsletter/v1/status under gunicorn vs a bare falcon app.

Target: our endpoint (authenticating its key against the database on every request) serves at
least half the requests per second of a bare falcon app returning the same JSON, under the same
gunicorn settings.

    python -m bench.status_overhead [--seconds 10] [--rounds 3] [--workers 2] [--database-url URL]

Both servers run side by side and are loaded in turn, ``--rounds`` times each for ``--seconds``
in all: a drift in the machine's speed during the run then falls on both alike (on a shared
two-core machine one 10 s window of each could differ by 20% for that alone). Each rate is
its requests over its seconds, summed over the rounds.
"""

from __future__ import annotations

import argparse

from bench.harness import ROOT, database, gunicorn, report, wrk_run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10, help="load time per server")
    parser.add_argument("--rounds", type=int, default=3, help="turns each server is loaded")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    rounds = max(1, args.rounds)
    seconds = max(1, round(args.seconds / rounds))
    load = {"seconds": seconds, "connections": args.connections, "threads": 2}
    path = "/api/newsletter/v1/status"

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
        served = {"bare": 0, "ours": 0}
        with (
            gunicorn("bench.bare_status_app:app", workers=args.workers) as bare,
            gunicorn(
                "examples.standalone.wsgi:app", workers=args.workers, env=env, cwd=ROOT
            ) as ours,
        ):
            for turn in range(rounds):
                bare_rate, bare_done = wrk_run(bare + path, **load)
                ours_rate, ours_done = wrk_run(
                    ours + path, headers=[f"Authorization: Bearer {key}"], **load
                )
                served["bare"] += bare_done
                served["ours"] += ours_done
                print(
                    f"round {turn + 1}: bare {bare_rate:,.0f} req/s, ours {ours_rate:,.0f} "
                    f"req/s, ratio {ours_rate / max(bare_rate, 1e-9):.2f}"
                )

    backend = "postgresql" if args.database_url else "sqlite"
    elapsed = rounds * seconds
    report(
        f"status_overhead[{backend}]",
        served["ours"] / elapsed,
        "req/s",
        baseline=served["bare"] / elapsed,
        target="ratio >= 0.50",
    )


if __name__ == "__main__":
    main()
