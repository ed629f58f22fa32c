"""Client CPU per signup: ``POST /api/newsletter/v1/subscribers`` in-process.

On a 2-core machine the gunicorn workers, PostgreSQL and wrk share the cores, so what a
signup costs the worker's CPU decides how many fit in a second. CPU time (``getrusage``, user
plus system) is also steady while other work loads the machine, where throughput is not.

    python -m bench.signup_cpu [--count 3000]                      # SQLite
    python -m bench.signup_cpu --database-url postgresql://...     # PostgreSQL

Both apps run in this process through falcon's TestClient (whose own cost is in both
figures), each after a warm-up of a tenth of ``--count`` signups: ours with its key check,
validation, contact and event, and the bare app (``bench/bare_signup_app.py``) committing the
address and one event row. Lower is better: the ratio is ours over the bare app's.
"""

from __future__ import annotations

import argparse
import resource
import uuid

import falcon.testing

from bench.bare_signup_app import create
from bench.harness import database, report
from bench.signups import prepared_service
from newsletter_connector import create_app

PATH = "/api/newsletter/v1/subscribers"
TARGET = "<= 0.7 ms/signup on PostgreSQL"


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_per_signup(client: falcon.testing.TestClient, count: int, headers: dict[str, str]) -> float:
    """Milliseconds of this process's CPU per signup of a unique address (after a warm-up)."""
    prefix = uuid.uuid4().hex[:8]

    def sign_up(name: str) -> None:
        result = client.simulate_post(PATH, json={"email": f"{name}@example.org"}, headers=headers)
        if result.status_code != 201:
            raise SystemExit(f"signup failed: {result.status_code} {result.text}")

    for n in range(max(1, count // 10)):
        sign_up(f"warm-{prefix}-{n}")
    began = cpu_seconds()
    for n in range(count):
        sign_up(f"{prefix}-{n}")
    return (cpu_seconds() - began) / count * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url:
        service, key = prepared_service(url)
        bare = cpu_per_signup(falcon.testing.TestClient(create(url)), args.count, {})
        ours = cpu_per_signup(
            falcon.testing.TestClient(create_app(service=service)),
            args.count,
            {"Authorization": f"Bearer {key}"},
        )
        service.close()
    print(f"database: {backend}; {args.count} signups each, in-process (falcon TestClient)")
    report(f"signup_cpu[{backend}]", ours, "ms/signup", baseline=bare, target=TARGET)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
