"""The worst request a stranger can send, in a worker's CPU time, against a plain request of the
same route in the same run.

Target: a request of 100 headers of 8 KB (runs without ``@``, of ``%``, of ``/``: the shapes
that made a backtracking pattern retry every start) and a 1 MiB form body cost a worker no more
than their size's worth: each stays within a few milliseconds a request, where a pattern
quadratic in them took seconds (45 such headers once held a worker 30 s).

    python -m bench.hostile_requests [--count 20] [--database-url URL]

``newsletter-connector serve`` runs one worker, with its access log (which redacts every atom
of its format) written to a file; each kind of request is sent ``--count`` times after one
warm-up, and the worker's time on a core (``/proc/PID/schedstat``) is read before and after.
The signup form's rate limit is off for the run, so every request is handled in full.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.harness import ROOT, database, free_port, gunicorn, report
from bench.signups import prepared_service

HEADERS = 100
HEADER_VALUE = 8_000  # gunicorn refuses a header line over 8,190 bytes
MIB = 1024 * 1024
BARE_PATH = "/api/newsletter/v1/status"
BARE_PATH = "/api/newsletter/v1/status"
RUNS = ("a", "%", "/", "a.b", "%25", "profile/")
TARGET = "ratio <= 1.5 against gunicorn's own cost of the same request"


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def hostile_headers() -> dict[str, str]:
    """As many 8 KB headers as gunicorn takes beside the few the client adds."""
    headers = {f"X-Bench-{i}": _fill(RUNS[i % len(RUNS)], HEADER_VALUE) for i in range(HEADERS - 6)}
    headers["User-Agent"] = _fill("a", HEADER_VALUE)
    headers["Referer"] = "https://bench.example/" + _fill("%", HEADER_VALUE - 30)
    return headers


def worker_cpu_seconds(master: int) -> float:
    """CPU time of ``master``'s (one) worker process, in nanoseconds' precision
    (``/proc/PID/schedstat``: ``/proc/PID/stat`` counts in ticks of 10 ms)."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return int(Path(f"/proc/{children[0]}/schedstat").read_text().split()[0]) / 1e9


def cpu_ms_per_request(master: int, send: Callable[[], httpx.Response], count: int) -> float:
    send()  # warm-up
    began = worker_cpu_seconds(master)
    for _ in range(count):
        response = send()
        if response.status_code >= 500:
            raise SystemExit(f"request failed: {response.status_code}")
    return (worker_cpu_seconds(master) - began) / count * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--database-url", help="PostgreSQL server URL (default: SQLite)")
    args = parser.parse_args(argv)
    backend = "postgresql" if args.database_url else "sqlite"
    with database(args.database_url) as url, tempfile.TemporaryDirectory() as work:
        service, _key = prepared_service(url)
        service.close()
        port = free_port()
        env = {
            **os.environ,
            "NEWSLETTER_DATABASE_URL": url,
            "NEWSLETTER_BASE_URL": "https://bench.example",
            "NEWSLETTER_SITE_SECRET": "b",
            "NEWSLETTER_RATE_LIMIT_SIGNUP": "0",
        }
        command = [sys.executable, "-m", "newsletter_connector", "serve", "--workers", "1"]
        command += ["--bind", f"127.0.0.1:{port}"]
        with (Path(work) / "serve.log").open("w") as log:
            server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
            try:
                base = f"http://127.0.0.1:{port}"
                with httpx.Client(base_url=base, timeout=60) as client:
                    deadline = time.monotonic() + 90
                    while True:
                        try:
                            client.get("/signup")
                            break
                        except httpx.TransportError:
                            if time.monotonic() > deadline or server.poll() is not None:
                                raise SystemExit("serve did not start") from None
                            time.sleep(0.2)
                    figures = measure(server.pid, client, args.count)
            finally:
                server.terminate()
                server.wait(timeout=30)
    with gunicorn("bench.bare_status_app:app", workers=1) as bare_base:
        master = _master_listening_on(int(bare_base.rsplit(":", 1)[1]))
        with httpx.Client(base_url=bare_base, timeout=60) as client:
            big = hostile_headers()
            bare = cpu_ms_per_request(
                master, lambda: client.get(BARE_PATH, headers=big), args.count
            )
    plain_get, headers, plain_post, body = figures
    print(f"database: {backend}; {args.count} requests of each kind, one gunicorn worker")
    print(f"plain GET /signup: {plain_get:.1f} ms; plain signup POST: {plain_post:.1f} ms")
    print(f"100 headers of 8 KB to a bare falcon app under gunicorn: {bare:.1f} ms")
    report(f"hostile_headers_cpu[{backend}]", headers, "ms/request", baseline=bare, target=TARGET)
    report(
        f"hostile_body_cpu[{backend}]",
        body,
        "ms/request",
        baseline=plain_post,
        target="ratio <= 5 against a plain signup",
    )
    return 0


def _master_listening_on(port: int) -> int:
    """The pid of the gunicorn master serving ``port``: of the processes holding its socket,
    the one with a child (the bench harness keeps the process to itself)."""
    listing = subprocess.run(
        ["ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    for part in listing.split("pid=")[1:]:
        pid = int(part.split(",", 1)[0])
        if Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            return pid
    raise SystemExit(f"no gunicorn master listens on port {port}")


def measure(master: int, client: httpx.Client, count: int) -> tuple[float, float, float, float]:
    """Worker CPU ms per request: a plain GET of the signup form, the same with 100 headers of
    8 KB, a plain signup POST, and one whose form body is 1 MiB."""
    big = hostile_headers()
    plain_form = {"Content-Type": "application/x-www-form-urlencoded"}
    huge = b"email=" + _fill("a", MIB).encode() + b"&name=" + b"%" * 4096
    n = iter(range(10**9))
    return (
        cpu_ms_per_request(master, lambda: client.get("/signup"), count),
        cpu_ms_per_request(master, lambda: client.get("/signup", headers=big), count),
        cpu_ms_per_request(
            master,
            lambda: client.post(
                "/signup", content=f"email=bench-{next(n)}%40example.org", headers=plain_form
            ),
            count,
        ),
        cpu_ms_per_request(
            master, lambda: client.post("/signup", content=huge, headers=plain_form), count
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
