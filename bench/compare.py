"""A/B benchmarking: the same benchmarks on a git ref and on the working tree, in alternating
rounds, so a change is judged in one run on a noisy machine.

    python -m bench --compare main --only rollups --rounds 3
    python -m bench --compare HEAD~3 --quick --database-url postgresql://postgres@127.0.0.1:5432/postgres

The ref is checked out into a temporary git worktree (removed afterwards). Each round runs every
selected benchmark once on each side, the side that goes first alternating from round to round,
so a machine that speeds up or slows down during the run weighs on both sides alike. A side
imports its own package and benchmarks: its ``src`` and root folder lead ``PYTHONPATH``.

For each RESULT name the summary prints the median figure of each side and their ratio as a
speed ratio (the working tree against the ref; above 1 is faster), whether the unit is a rate
(``signups/s``: higher is better) or a time (``s``, ``ms/signup``: lower is better). For a
RESULT with a baseline measured in the same run (``baseline ...``), it prints the same speed
ratio of the figure against its run's baseline too: a machine whose speed swings between runs
moves a figure and its baseline together, so this one judges a change on a noisy machine with
fewer rounds (when the change cannot have touched what the baseline measures).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import ROOT, figure_text

RESULT_LINE = re.compile(
    r"^RESULT (?P<name>[^:]+): (?P<figure>[0-9][0-9,.]*) (?P<unit>\S+)"
    r"(?: \(baseline (?P<baseline>[0-9][0-9,.]*) )?"
)


def is_rate(unit: str) -> bool:
    """Whether a bigger figure is the better one: a rate (``signups/s``). Every other unit is
    a time or a size (``ms``, ``ms/request``, ``s``, ``MiB``), the smaller the better."""
    return unit.endswith("/s")


@dataclass
class Side:
    """One tree under comparison and the figures its rounds gave, by RESULT name."""

    label: str
    root: Path
    figures: dict[str, list[float]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    #: Each run's figure divided by the baseline the same run measured, by RESULT name.
    against_baseline: dict[str, list[float]] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The environment its benchmarks run in: its own package and bench modules first."""
        env = {**os.environ, "PYTHONPATH": f"{self.root / 'src'}{os.pathsep}{self.root}"}
        env.pop("NEWSLETTER_TEST_DATABASE_URL", None)  # each bench is told its database
        return env


def parse_results(output: str) -> dict[str, tuple[float, str, float | None]]:
    """The RESULT lines of a benchmark's output: name -> (figure, unit, the baseline the run
    measured, or ``None``)."""
    found: dict[str, tuple[float, str, float | None]] = {}
    for line in output.splitlines():
        match = RESULT_LINE.match(line)
        if match:
            baseline = match["baseline"]
            found[match["name"]] = (
                float(match["figure"].replace(",", "")),
                match["unit"],
                float(baseline.replace(",", "")) if baseline else None,
            )
    return found


def speed_ratio(ref: float, new: float, unit: str) -> float:
    """How much faster the new figure is than the ref's (above 1 is faster)."""
    if is_rate(unit):
        return new / ref if ref else float("inf")
    return ref / new if new else float("inf")


@contextmanager
def ref_worktree(ref: str) -> Iterator[Path]:
    """A detached git worktree of ``ref``, removed on exit.

    :raises SystemExit: when git cannot check the ref out (its message is printed).
    """
    folder = Path(tempfile.mkdtemp(prefix="nc-bench-ref-"))
    tree = folder / "tree"
    checkout = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), ref],
        capture_output=True,
        text=True,
    )
    if checkout.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise SystemExit(f"cannot check out {ref!r}: {checkout.stderr.strip()}")
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def imported_package(side: Side) -> Path:
    """Where ``newsletter_connector`` is imported from under ``side``'s environment."""
    where = subprocess.run(
        [sys.executable, "-c", "import newsletter_connector as p; print(p.__file__)"],
        cwd=side.root,
        env=side.env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(where.stdout.strip()).resolve()


def run_once(side: Side, module: str, arguments: Sequence[str]) -> bool:
    """Run one benchmark on ``side``, stream its output, and keep its RESULT figures.

    :returns: whether it exited 0.
    """
    command = [sys.executable, "-m", f"bench.{module}", *arguments]
    print(f"== [{side.label}] {' '.join(command[2:])}", flush=True)
    process = subprocess.run(command, cwd=side.root, env=side.env(), capture_output=True, text=True)
    sys.stdout.write(process.stdout)
    sys.stdout.flush()
    for name, (figure, unit, baseline) in parse_results(process.stdout).items():
        side.figures.setdefault(name, []).append(figure)
        side.units[name] = unit
        if baseline:
            side.against_baseline.setdefault(name, []).append(figure / baseline)
    if process.returncode != 0:
        sys.stdout.write(process.stderr)
    return process.returncode == 0


def compare(ref: str, runs: Sequence[tuple[str, list[str]]], rounds: int) -> int:
    """Run ``runs`` (module, arguments) on ``ref`` and on the working tree, ``rounds`` times
    each in alternating order, then print the summary.

    :returns: the process exit status: 1 when any run failed or a side gave no figure.
    """
    with ref_worktree(ref) as tree:
        sides = (Side(f"ref {ref}", tree), Side("working tree", ROOT))
        for side in sides:
            package = imported_package(side)
            if not package.is_relative_to(side.root.resolve()):
                raise SystemExit(f"[{side.label}] imports newsletter_connector from {package}")
        failures: list[str] = []
        for round_number in range(rounds):
            order = sides if round_number % 2 == 0 else sides[::-1]
            for module, arguments in runs:
                for side in order:
                    if not (side.root / "bench" / f"{module}.py").exists():
                        continue  # a benchmark the ref does not have yet
                    if not run_once(side, module, arguments):
                        failures.append(f"[{side.label}] {module} (round {round_number + 1})")
    return print_summary(*sides, failures=failures)


def print_summary(ref: Side, new: Side, *, failures: Sequence[str]) -> int:
    """Print each RESULT name's median on both sides and the speed ratio; 1 on any failure."""
    print(f"\nComparison: median of each side's rounds; speed ratio = {new.label} vs {ref.label}")
    missing = False
    for name in sorted(set(ref.figures) | set(new.figures)):
        unit = new.units.get(name) or ref.units[name]
        if name not in ref.figures or name not in new.figures:
            side = ref if name not in ref.figures else new
            print(f"COMPARE {name}: no figure on {side.label}")
            missing = missing or side is new
            continue
        before = statistics.median(ref.figures[name])
        after = statistics.median(new.figures[name])
        ratio = speed_ratio(before, after, unit)
        line = (
            f"COMPARE {name}: {ref.label} {figure_text(before)} {unit}; {new.label} "
            f"{figure_text(after)} {unit}; speed ratio {ratio:.2f} "
            f"({len(ref.figures[name])} and {len(new.figures[name])} runs)"
        )
        if name in ref.against_baseline and name in new.against_baseline:
            in_run = speed_ratio(
                statistics.median(ref.against_baseline[name]),
                statistics.median(new.against_baseline[name]),
                unit,
            )
            line += f"; against its run's baseline {in_run:.2f}"
        print(line)
    for label in failures:
        print(f"FAILED {label}")
    return 1 if failures or missing else 0
