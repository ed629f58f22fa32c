"""Each benchmark runs at a small size (figures are read from its output, never asserted)."""

from __future__ import annotations

import os
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
    assert "RESULT " in result.stdout, result.stdout
    return result.stdout


def pass_database_args() -> tuple[str, list[str]]:
    """The database of this pass of the suite: PostgreSQL when configured, else SQLite."""
    url = os.environ.get("NEWSLETTER_TEST_DATABASE_URL")
    return ("postgresql", ["--database-url", url]) if url else ("sqlite", [])


def test_status_overhead_bench_runs() -> None:
    backend, db_args = pass_database_args()
    output = run_bench(
        "bench.status_overhead", "--seconds", "1", "--workers", "1", "--connections", "2", *db_args
    )
    assert f"status_overhead[{backend}]" in output
