"""The test tiers: every module named in the system tier exists, and a hang fails the test."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

from .conftest import SYSTEM_TIER

ROOT = Path(__file__).resolve().parents[1]


def test_every_system_tier_module_exists() -> None:
    missing = sorted(name for name in SYSTEM_TIER if not (ROOT / "tests" / name).is_file())
    assert not missing, f"SYSTEM_TIER names modules that do not exist: {missing}"


def test_a_hanging_test_fails_instead_of_holding_the_run() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < int(options["timeout"]) <= 900
    assert "system" in " ".join(options["markers"])
