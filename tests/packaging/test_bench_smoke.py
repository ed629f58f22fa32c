"""Each benchmark runs at a small size (figures are read from its output, never asserted)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docblocks import docblock
from tests.support.paths import ROOT

pytestmark = pytest.mark.system


def run_bench(module: str, *args: str) -> str:
    return run_python("-m", module, *args)


def run_python(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, *args],
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
        "bench.status_overhead", "--seconds", "2", "--rounds", "2", "--workers", "1",
        "--connections", "2", *db_args,
    )  # fmt: skip
    assert output.count("round ") == 2, output
    result_line(output, "status_overhead")


def db_args() -> list[str]:
    url = pass_database_url()
    return ["--database-url", url] if url else []


def backend() -> str:
    return "postgresql" if pass_database_url() else "sqlite"


def result_line(output: str, name: str) -> str:
    """The ``RESULT name[backend]: ...`` line, which always names its baseline and ratio."""
    match = re.search(rf"^RESULT {re.escape(name)}\[{backend()}\]: .*$", output, re.M)
    assert match, output
    assert re.search(r"\(baseline [\d,.]+ .+, ratio \d+\.\d\d; target .+\)$", match[0]), match[0]
    return match[0]


def test_subscriber_walk_bench_runs() -> None:
    """The commands docs/newsletter-api.md gives (the line of this pass's database, the
    server's address this pass's), at a small size."""
    sqlite, postgres = (
        shlex.split(line, comments=True) for line in docblock("newsletter-api-bench").splitlines()
    )
    url = pass_database_url()
    command = [*postgres[:-1], url] if url else sqlite
    assert command[:3] == ["python", "-m", "bench.subscriber_walk"], command
    output = run_bench(*command[2:], "--count", "1234", "--limit", "50", "--sample", "5")
    assert "subscribers: 1234  page size: 50  pages: 25" in output
    assert re.search(r"ratio last/first: \d+\.\d\d", output)
    for name in ("subscriber_walk", "subscriber_walk_last_page", "subscriber_walk_peak_rss"):
        result_line(output, name)


def test_admin_subscribers_bench_runs() -> None:
    output = run_bench("bench.admin_subscribers", "--count", "1234", "--rounds", "10", *db_args())
    assert "subscribers: 1234  confirmed exported: 741" in output
    for name in ("admin_prefix_page", "admin_export", "admin_export_peak_rss"):
        result_line(output, name)


def test_admin_subscriber_list_bench_runs() -> None:
    output = run_bench(
        "bench.admin_subscriber_list", "--count", "3000", "--repeat", "1", *db_args()
    )
    assert "loaded 3000 subscribers" in output
    assert re.search(r"zip3: first page .*; [\d,]+ subscribers? match", output), output
    for name in ("admin_list_everyone", "admin_list_bounced_zip", "admin_list_worst"):
        result_line(output, name)


def test_admin_bulk_job_bench_runs() -> None:
    output = run_bench(
        "bench.admin_bulk_job", "--count", "1500", "--rows", "500", "--baseline-rows", "500",
        "--act", "erase", *db_args(),
    )  # fmt: skip
    assert re.search(r"erase 500 of 1,500: .* rows/s; ticked rows' path", output), output
    for name in ("bulk_job_rows_per_s", "bulk_job_peak_memory"):
        result_line(output, name)


def test_subscriber_import_bench_runs() -> None:
    output = run_bench("bench.subscriber_import", "--rows", "1200", *db_args())
    assert re.search(r"import 1,200 lines .* lines/s, 2,400 events; again", output), output
    for name in ("import_lines_per_s", "import_repeat_lines_per_s", "import_peak_memory"):
        result_line(output, name)
    if pass_database_url() is not None:  # the floor: PostgreSQL's own COPY of the same rows
        assert "COPY of the rows" in result_line(output, "import_against_copy_floor"), output


@pytest.mark.skipif(
    pass_database_url() is None, reason="PostgreSQL only: the load runs under gunicorn on a server"
)
def test_admin_load_bench_runs() -> None:
    output = run_bench(
        "bench.admin_load", "--count", "2000", "--events", "2000", "--seconds", "1",
        "--warm", "1", "--editors", "4", *db_args(),
    )  # fmt: skip
    assert "editors (editors on):" in output
    assert re.search(r"^RESULT admin_load_editors_p95\[postgresql\]: [\d,.]+ ms", output, re.M)
    for name in ("admin_load_api_p95", "admin_load_reader_p95"):
        result_line(output, name)


def test_signup_cpu_bench_runs() -> None:
    output = run_bench("bench.signup_cpu", "--count", "20", *db_args())
    assert "ms/signup" in result_line(output, "signup_cpu")


def test_hostile_requests_bench_runs() -> None:
    output = run_bench("bench.hostile_requests", "--count", "2", *db_args())
    assert "ms/request" in result_line(output, "hostile_headers_cpu")
    assert "ms/request" in result_line(output, "hostile_body_cpu")


def test_signups_bench_runs() -> None:
    output = run_bench("bench.signups", "--seconds", "1", "--workers", "2", *db_args())
    assert "MISSING" not in output
    result_line(output, "signups")


def test_sync_bench_runs() -> None:
    output = run_bench("bench.sync", "--events", "450", *db_args())
    assert "'runner': {'requests': 5, 'events': 450, 'distinct': 450}" in output
    result_line(output, "sync")


def test_dashboard_bench_runs() -> None:
    output = run_bench("bench.dashboard", "--count", "2000", "--repeat", "1", *db_args())
    assert "overview(90):" in output
    result_line(output, "dashboard30")
    result_line(output, "dashboard90")


def test_admin_pages_bench_runs() -> None:
    output = run_bench(
        "bench.admin_pages", "--count", "2000", "--events", "3000", "--repeat", "1", *db_args()
    )
    assert "loaded 2000 subscribers and 3000 events" in output
    assert "GET /admin/analytics?from=" in output
    for name in ("admin_dashboard30", "admin_dashboard90", "admin_analytics92"):
        result_line(output, name)


def test_one_command_runs_every_benchmark_and_summarises() -> None:
    """``python -m bench`` runs each benchmark as a subprocess and repeats the RESULT lines;
    the two it runs here are the rollups' and the export walk's smoke runs."""
    args = ["--quick", "--only", "rollups", "--only", "export_walk"]
    url = pass_database_url()
    output = run_bench("bench", *args, *(["--database-url", url, "--no-sqlite"] if url else []))
    for needle in ("rollups: 92 days in", "baseline COUNT(*) scan", "ratio"):
        assert needle in output
    for needle in ("walked 50000 events", "events/s", "with the client's JSON decoding"):
        assert needle in output
    summary = output.split("\nSummary\n", 1)[1]
    probe = r"cpu loop \d+\.\d{3} s, memory \d+\.\d{3} s"
    assert re.match(rf"machine probe: before: {probe}; after: {probe}", summary)
    result_line(summary, "rollups")
    result_line(summary, "export_walk")
    assert "FAILED" not in summary


@pytest.mark.database_independent  # the rounds' order and the summary, on a SQLite file
def test_compare_runs_a_ref_and_the_working_tree_in_alternating_rounds() -> None:
    """``--compare REF`` runs each side in its own tree, alternating which goes first."""
    script = (
        "import sys; from bench.compare import compare; "
        "sys.exit(compare('HEAD', [('rollups', ['--size', '2000'])], rounds=2))"
    )
    output = run_python("-c", script)
    started = re.findall(r"^== \[(ref HEAD|working tree)\] bench\.rollups", output, re.MULTILINE)
    assert started == ["ref HEAD", "working tree", "working tree", "ref HEAD"]
    line = re.search(r"^COMPARE rollups\[sqlite\]: (.*)$", output, re.MULTILINE)
    assert line, output
    assert re.fullmatch(
        r"ref HEAD [\d,.]+ s; working tree [\d,.]+ s; speed ratio \d+\.\d\d \(2 and 2 runs\); "
        r"against its run's baseline \d+\.\d\d",
        line[1],
    )
    assert "FAILED" not in output


def test_compare_reads_speed_ratios_the_right_way_up() -> None:
    from bench.compare import parse_results, speed_ratio

    figures = parse_results(
        "noise\nRESULT signups[sqlite]: 1,234.5 signups/s (baseline 1,000.0 signups/s)\n"
        "RESULT rollups[sqlite]: 0.500 s (target < 1 s)\n"
    )
    assert figures == {
        "signups[sqlite]": (1234.5, "signups/s", 1000.0),
        "rollups[sqlite]": (0.5, "s", None),
    }
    assert speed_ratio(1000.0, 1250.0, "signups/s") == 1.25  # a higher rate is faster
    assert speed_ratio(0.5, 0.4, "s") == 1.25  # a shorter time is faster
    assert speed_ratio(100.0, 125.0, "MiB") == 0.8  # more memory is worse
    # Every time a benchmark reports, whatever it is per: a shorter one is faster.
    for unit in ("ms", "ms/request", "ms/page", "ms/signup"):
        assert speed_ratio(10.0, 8.0, unit) == 1.25, unit


@pytest.mark.database_independent  # the summary's arithmetic alone
def test_compare_judges_each_figure_against_its_own_runs_baseline_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A machine twice as slow in the working tree's runs halves its figures and their
    baselines alike: the plain ratio says 0.50, the ratio against each run's baseline 1.00."""
    from bench.compare import Side, print_summary

    ref, new = Side("ref", Path("ref")), Side("new", Path("new"))
    for side, figure, baseline in ((ref, 2.0, 1.0), (new, 4.0, 2.0)):
        side.figures["page[sqlite]"] = [figure]
        side.units["page[sqlite]"] = "ms"
        side.against_baseline["page[sqlite]"] = [figure / baseline]
    assert print_summary(ref, new, failures=()) == 0
    printed = capsys.readouterr().out
    assert "speed ratio 0.50 (1 and 1 runs); against its run's baseline 1.00" in printed


@pytest.mark.database_independent  # the printing alone
def test_figures_print_with_four_significant_digits_and_never_as_an_exponent() -> None:
    """A 2.4 ms page is not printed as 0.002 s (a comparison would read 2 against 3 ms as a
    third slower), and ``compare`` reads plain digits only."""
    from bench.compare import RESULT_LINE
    from bench.harness import figure_text

    assert figure_text(0.0023456) == "0.002346"
    assert figure_text(0.5) == "0.5000"
    assert figure_text(0.000012345) == "0.00001234"
    assert figure_text(12345.6) == "12,345.6"
    assert figure_text(0) == "0.000"
    for value in (0.0023456, 0.000012345, 7.5, 12345.6):
        line = f"RESULT page[sqlite]: {figure_text(value)} s"
        match = RESULT_LINE.match(line)
        assert match and float(match["figure"].replace(",", "")) == pytest.approx(value, rel=1e-3)
