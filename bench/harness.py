"""Shared bench helpers: temporary databases, gunicorn servers, wrk, and one report format.

Every benchmark prints lines of the form

    RESULT <name>: <figure> <unit> (baseline <baseline> <unit>, ratio <r>, target <target>)

and exits 0 even when a target is missed (a benchmark measures; it does not gate). The
figure and its baseline are always measured in the same run on the same machine.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx

ROOT = Path(__file__).resolve().parents[1]


def _best_of_three(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - began)
    return best


def _cpu_loop() -> int:
    total = 0
    for number in range(10_000_000):
        total += number
    return total


def _memory_workload() -> int:
    rows = [
        {"id": n, "email": f"user{n}@example.org", "tags": [n % 7, n % 11]} for n in range(200_000)
    ]
    random.Random(1).shuffle(rows)  # scattered reads: caches and memory, not just the core
    return sum(row["id"] for row in json.loads(json.dumps(rows)))


def machine_probe() -> str:
    """The machine's speed, printed beside a full run so absolute figures from different runs
    (and machines) can be read against each other: seconds (best of three, lower is faster)
    of a tight pure-Python loop (10,000,000 additions: the core) and of building, shuffling
    and JSON round-tripping 200,000 small dicts (caches and memory too: a tight loop alone can
    miss a slowdown of work with a larger footprint)."""
    cpu, memory = _best_of_three(_cpu_loop), _best_of_three(_memory_workload)
    return f"cpu loop {cpu:.3f} s, memory {memory:.3f} s"


def report(
    name: str,
    figure: float,
    unit: str,
    *,
    baseline: float | None = None,
    target: str = "",
) -> None:
    """Print one result line (see the module docstring). A baseline of zero measured nothing,
    so it is refused rather than turned into an endless ratio."""
    if baseline is not None and baseline <= 0:
        raise ValueError(f"{name}: the baseline measured nothing ({baseline} {unit})")
    parts = [f"RESULT {name}: {figure_text(figure)} {unit}"]
    details = []
    if baseline is not None:
        ratio = figure / baseline
        details.append(f"baseline {figure_text(baseline)} {unit}, ratio {ratio:.2f}")
    if target:
        details.append(f"target {target}")
    if details:
        parts.append(f"({'; '.join(details)})")
    print(" ".join(parts), flush=True)


def figure_text(value: float) -> str:
    """``value`` with at least four significant digits below 10 (a page of 2.4 ms is not
    rounded to 2 or 3 ms, which a comparison would read as a third slower), never as an
    exponent (``compare`` reads plain digits)."""
    if abs(value) >= 10:
        return f"{value:,.1f}"
    if value == 0:
        return "0.000"
    return f"{value:.{min(9, max(3, 3 - math.floor(math.log10(abs(value)))))}f}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def sqlite_database() -> Iterator[str]:
    """A migrated SQLite database in a temporary folder."""
    from newsletter_connector.plugins.sql_store.engine import make_engine
    from newsletter_connector.plugins.sql_store.migrate import upgrade

    folder = Path(tempfile.mkdtemp(prefix="nc-bench-"))
    url = f"sqlite:///{folder / 'bench.db'}"
    engine = make_engine(url)
    upgrade(engine)
    engine.dispose()
    try:
        yield url
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def database(url: str | None) -> Iterator[str]:
    """``url`` migrated as given (PostgreSQL: a fresh database made and dropped), or SQLite."""
    if not url:
        with sqlite_database() as sqlite_url:
            yield sqlite_url
        return
    from newsletter_connector.testing.databases import _migrate, temporary_postgres_database

    with temporary_postgres_database(url) as pg_url:
        _migrate(pg_url)
        yield pg_url


@contextmanager
def gunicorn(
    app: str, *, workers: int, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> Iterator[str]:
    """Serve the WSGI ``module:callable`` under gunicorn (sync workers); yield its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            app,
        ],
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(base + "/", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"gunicorn for {app} did not start") from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def wrk(
    url: str,
    *,
    seconds: float,
    connections: int,
    threads: int,
    headers: Sequence[str] = (),
    script: Path | None = None,
    script_args: Sequence[str] = (),
) -> float:
    """Requests per second ``wrk`` reaches against ``url``; any non-2xx answer is an error."""
    return wrk_run(
        url,
        seconds=seconds,
        connections=connections,
        threads=threads,
        headers=headers,
        script=script,
        script_args=script_args,
    )[0]


def wrk_run(
    url: str,
    *,
    seconds: float,
    connections: int,
    threads: int,
    headers: Sequence[str] = (),
    script: Path | None = None,
    script_args: Sequence[str] = (),
) -> tuple[float, int]:
    """``(requests per second, requests completed)`` of one ``wrk`` run (a Lua ``script``
    may shape the requests); any non-2xx answer is an error."""
    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is not installed (apt-get install wrk)")
    args = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s"]
    for header in headers:
        args += ["-H", header]
    if script is not None:
        args += ["-s", str(script)]
    args.append(url)
    if script_args:
        args += ["--", *script_args]
    output = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    if "Non-2xx or 3xx responses" in output:
        raise RuntimeError(f"wrk saw errors from {url}:\n{output}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in", output)
    if not rate or not total:
        raise RuntimeError(f"cannot read wrk output:\n{output}")
    if int(total.group(1)) == 0:
        raise RuntimeError(f"{url} answered no request within {seconds} s:\n{output}")
    return float(rate.group(1)), int(total.group(1))


class _Log:
    def info(self, message: str, *args: object) -> None:
        print(message % args, file=sys.stderr)


#: What ``freeze_loaded_app`` needs of a gunicorn worker, for benchmarks that run the app in
#: their own process the way a worker does.
BENCH_WORKER = SimpleNamespace(log=_Log())
