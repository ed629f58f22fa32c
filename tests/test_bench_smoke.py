"""Each benchmark runs at a small size (figures are read from its output, never asserted)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_bench(module: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def pass_database_url() -> str | None:
    """The PostgreSQL server of this pass of the suite, or ``None`` on the SQLite pass."""
    return os.environ.get("NEWSLETTER_TEST_DATABASE_URL") or None


def test_status_overhead_bench_runs() -> None:
    url = pass_database_url()
    db_args = ["--database-url", url] if url else []
    output = run_bench(
        "bench.status_overhead", "--seconds", "1", "--workers", "1", "--connections", "2", *db_args
    )
    assert f"status_overhead[{'postgresql' if url else 'sqlite'}]" in output


def test_subscriber_walk_bench_runs() -> None:
    url = pass_database_url()
    db_args = ["--postgres", url] if url else []
    output = run_bench(
        "bench.subscriber_walk", "--count", "1234", "--limit", "50", "--sample", "5", *db_args
    )
    assert "subscribers: 1234  page size: 50  pages: 25" in output
    assert re.search(r"ratio last/first: \d+\.\d\d", output)


def test_rollups_bench_runs() -> None:
    output = run_bench("bench.rollups", "--size", "3000")
    for needle in ("rollups: 92 days in", "baseline COUNT(*) scan", "ratio"):
        assert needle in output


def test_export_walk_bench_runs() -> None:
    output = run_bench("bench.export_walk", "--size", "3000")
    for needle in ("walked 3000 events", "events/s", "ratio"):
        assert needle in output
