"""The benchmarks in bench/ run end to end (tiny sizes) and print their figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("rollups.py", ["rollups: 92 days in", "baseline COUNT(*) scan", "ratio"]),
        ("export_walk.py", ["walked 3000 events", "events/s", "ratio"]),
    ],
)
def test_benchmark_runs_with_a_tiny_size(script: str, expected: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / script), "--size", "3000"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for needle in expected:
        assert needle in result.stdout
