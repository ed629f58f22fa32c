"""The code, tests, docs and benchmarks speak of the code as it is: no tracker issue numbers, no
account of which session or round of work did what, and no benchmark diary (that belongs in
commit messages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

# Reads every file of the repository
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

SCANNED = ("src", "tests", "docs", "bench", "examples", "scripts", "README.md")
SUFFIXES = {".py", ".md", ".html", ".txt", ".toml", ".lua", ".js", ".mako", ""}

#: The word "issue" followed by a tracker number, "#" optional; not an issue's dated name.
TRACKER_NUMBER = re.compile(r"\bissues?\s+#?\d+\b(?!-\d\d)", re.IGNORECASE)
#: An ordinal or numbered session, or a numbered round of the work.
WORK_HISTORY = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|this|last|next)"
    r"\s+session\b|\bsession\s+\d+\b|\bround\s+\d+\s+of\s+(?:the\s+)?work\b",
    re.IGNORECASE,
)
#: A benchmark diary: a figure with its unit followed by an arrow and the next figure, or the
#: phrase of a figure that moved ("w-e-n-t from", without the dashes).
BENCHMARK_DIARY = re.compile(
    r"\d[\d.,]*\s*(?:s|ms|µs|x|\u00d7|%)\s*(?:→|->)\s*~?\d"
    r"|\d\s*(?:→|->)\s*~?\d[\d.,]*\s*(?:s|ms|µs|x|\u00d7|%)(?!\w)"
    r"|\bwent from\b",
    re.IGNORECASE,
)


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for candidate in candidates:
            if (
                candidate.is_file()
                and candidate.suffix in SUFFIXES
                and "__pycache__" not in candidate.parts
            ):
                files.append(candidate)
    return files


def test_no_tracker_numbers_or_work_history() -> None:
    found = []
    for path in scanned_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for pattern in (TRACKER_NUMBER, WORK_HISTORY, BENCHMARK_DIARY):
                match = pattern.search(line)
                if match:
                    found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    assert not found, "history belongs in commit messages:\n" + "\n".join(found)


def test_the_patterns_catch_history_and_spare_issue_names() -> None:
    # The samples are assembled so that this file holds none of what it looks for.
    word, number = "issue", 10
    assert TRACKER_NUMBER.search(f"a speed trick ({word} {number})")
    assert TRACKER_NUMBER.search(f"see {word} #{number}")
    ordinal = "fifth"
    assert WORK_HISTORY.search(f"since the {ordinal} session")
    assert not TRACKER_NUMBER.search(f"Daily {word} 2026-11-21")
    assert not WORK_HISTORY.search("a session id, sessions per day, a session-level lock")
    arrow = chr(0x2192)
    before, after = "0.72", "0.48 s"
    assert BENCHMARK_DIARY.search(f"they use two ({before} {arrow} {after} here)")
    assert BENCHMARK_DIARY.search(f"/status {'went'} from 0.40x")
    assert BENCHMARK_DIARY.search(f"a claim took 40 ms {'->'} 12 ms")
    assert not BENCHMARK_DIARY.search(f"above 100 {arrow} 100 (the spec's cap)")
    assert not BENCHMARK_DIARY.search("pending -> confirmed, 2 steps")
