"""Run every benchmark, on SQLite and (given a server) PostgreSQL, and summarise the results.

    python -m bench                                   # full sizes, SQLite only
    python -m bench --database-url postgresql://postgres@127.0.0.1:5432/postgres
    python -m bench --quick                           # small sizes (a few minutes)
    python -m bench --only rollups --only export_walk
    python -m bench --compare main --rounds 3        # A/B: a git ref against the working tree

With ``--database-url`` (or ``NEWSLETTER_TEST_DATABASE_URL``) every benchmark runs twice: on a
temporary SQLite file and on a fresh PostgreSQL database made on that server (and dropped).
Each benchmark is a subprocess, so one's memory or pools never colour the next; their own
output streams through, and the ``RESULT`` lines are repeated in a summary at the end.
With ``--compare REF`` the same benchmarks run on REF and on the working tree in alternating
rounds, and the summary gives each figure's median on both sides and their ratio
(``bench/compare.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from bench.compare import compare
from bench.harness import ROOT, machine_probe

#: name -> (full-size arguments, --quick arguments). Every module takes --database-url.
BENCHES: dict[str, tuple[list[str], list[str]]] = {
    "status_overhead": (["--seconds", "10"], ["--seconds", "2"]),
    "subscriber_walk": (
        ["--count", "1000000", "--limit", "500"],
        ["--count", "20000", "--limit", "500", "--sample", "10"],
    ),
    "signups": (["--seconds", "10"], ["--seconds", "2"]),
    "signup_cpu": (["--count", "3000"], ["--count", "300"]),
    "hostile_requests": (["--count", "20"], ["--count", "5"]),
    "sync": (["--events", "100000"], ["--events", "5000"]),
    "export_walk": (["--size", "1000000"], ["--size", "50000"]),
    "rollups": (["--size", "1000000"], ["--size", "50000"]),
    "dashboard": (["--count", "1000000"], ["--count", "20000"]),
    "admin_pages": (
        ["--count", "1000000", "--events", "1000000"],
        ["--count", "20000", "--events", "20000"],
    ),
    "admin_subscribers": (["--count", "1000000"], ["--count", "20000", "--rounds", "50"]),
    "admin_subscriber_list": (["--count", "1000000"], ["--count", "20000", "--repeat", "2"]),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("NEWSLETTER_TEST_DATABASE_URL") or None,
        help="PostgreSQL server URL: also run every benchmark there",
    )
    parser.add_argument("--sqlite", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--only", action="append", choices=sorted(BENCHES), help="repeatable")
    parser.add_argument("--compare", metavar="REF", help="A/B against this git ref")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each side with --compare")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    backends: list[str | None] = [None] if args.sqlite else []
    if args.database_url:
        backends.append(args.database_url)
    if args.compare:
        runs = [
            (name, [*(quick if args.quick else full), *(["--database-url", url] if url else [])])
            for name, (full, quick) in BENCHES.items()
            if not args.only or name in args.only
            for url in backends
        ]
        return compare(args.compare, runs, args.rounds)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NEWSLETTER_TEST_DATABASE_URL", None)  # each bench is told its database explicitly
    results: list[str] = []
    failures: list[str] = []
    probes = [machine_probe()]
    print(f"== machine probe: {probes[0]} (lower is faster)", flush=True)
    for name, (full, quick) in BENCHES.items():
        if args.only and name not in args.only:
            continue
        for url in backends:
            command = [sys.executable, "-m", f"bench.{name}", *(quick if args.quick else full)]
            if url:
                command += ["--database-url", url]
            label = f"{name} on {'PostgreSQL' if url else 'SQLite'}"
            print(f"== {label}: {' '.join(command[1:])}", flush=True)
            began = time.monotonic()
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, bufsize=1
            )
            assert process.stdout is not None
            for line in process.stdout:
                print(line, end="", flush=True)
                if line.startswith("RESULT "):
                    results.append(line.rstrip())
            if process.wait() != 0:
                failures.append(label)
            print(f"== {label}: {time.monotonic() - began:.0f} s", flush=True)
    probes.append(machine_probe())
    print("\nSummary")
    print(f"machine probe: before: {probes[0]}; after: {probes[1]} (lower is faster)")
    for line in results:
        print(line)
    for label in failures:
        print(f"FAILED {label}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
