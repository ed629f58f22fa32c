"""bench/subscriber_walk.py runs end to end at a small size (figures are not asserted here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from newsletter_connector.testing.databases import postgres_server_url

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "subscriber_walk.py"


def test_subscriber_walk_bench_small() -> None:
    command = [sys.executable, str(SCRIPT), "--count", "1234", "--limit", "50", "--sample", "5"]
    server = postgres_server_url()
    if server:
        command += ["--postgres", server]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "subscribers: 1234  page size: 50  pages: 25" in result.stdout
    assert re.search(r"ratio last/first: \d+\.\d\d", result.stdout)
