"""The test tiers: a module joins the system tier by marking itself, the quick and system tiers
together are the whole suite with no test in both, and a hang fails the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

from tests.conftest import SWEEP_CASES, marks_itself_system, misplaced_database_independent
from tests.support.examples import examples
from tests.support.paths import ROOT


def system_modules() -> set[str]:
    """The test modules that mark themselves ``pytest.mark.system``, as paths below ``tests/``."""
    tests = ROOT / "tests"
    return {
        path.relative_to(tests).as_posix()
        for path in tests.rglob("test_*.py")
        if marks_itself_system(path)
    }


def test_a_module_joins_the_system_tier_by_its_own_mark(tmp_path: Path) -> None:
    assert {
        "cli/test_serve.py",
        "plugins/sql_store/test_pgbouncer.py",
        "docs/test_docs_site.py",
    } <= system_modules()
    assert "packaging/test_tiers.py" not in system_modules()
    marked = tmp_path / "test_marked.py"
    marked.write_text("import pytest\n\npytestmark = pytest.mark.system  # why\n")
    listed = tmp_path / "test_listed.py"
    listed.write_text("import pytest\n\npytestmark = [pytest.mark.system, pytest.mark.slow]\n")
    quoted = tmp_path / "test_quoted.py"
    quoted.write_text('"""Not this: pytestmark = pytest.mark.system."""\n')
    assert marks_itself_system(marked) and marks_itself_system(listed)
    assert not marks_itself_system(quoted)


def test_a_test_marked_database_independent_may_not_take_the_runs_database(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.fixture
        def newsletter_storage():
            return "the run's database"

        @pytest.fixture
        def newsletter_service(newsletter_storage):
            return "built on it"

        @pytest.mark.database_independent
        def test_own_server():
            pass

        @pytest.mark.database_independent
        def test_on_the_runs_database(newsletter_service):
            pass

        def test_unmarked(newsletter_storage):
            pass
        """
    )
    items, _ = pytester.inline_genitems("-p", "no:cacheprovider")
    assert [item.name for item in items] == [
        "test_own_server",
        "test_on_the_runs_database",
        "test_unmarked",
    ]
    assert [nodeid.split("::")[1] for nodeid in misplaced_database_independent(items)] == [
        "test_on_the_runs_database"
    ]


def test_a_hanging_test_fails_instead_of_holding_the_run() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < int(options["timeout"]) <= 900
    assert "system" in " ".join(options["markers"])


#: Left out of the collections below: schemathesis makes this module's boundary cases as it is
#: collected (half a minute), and the module is in the system tier by its own mark, which
#: ``system_modules`` reads.
GENERATES_WHEN_COLLECTED = "tests/web/test_openapi_boundaries.py"


def collected(*options: str) -> set[str]:
    """The node ids a ``pytest --collect-only`` run with ``options`` selects."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly"]
    run = subprocess.run(
        [*command, f"--ignore={GENERATES_WHEN_COLLECTED}", *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return {line for line in run.stdout.splitlines() if "::" in line}


@pytest.mark.system  # three collections of the whole suite in subprocesses
@pytest.mark.database_independent
def test_the_quick_and_system_tiers_partition_the_suite() -> None:
    quick, system, everything = collected(), collected("-m", "system"), collected("--all")
    assert quick and system
    assert not quick & system, sorted(quick & system)[:10]
    assert quick | system == everything, sorted(everything ^ (quick | system))[:10]
    left_out = GENERATES_WHEN_COLLECTED.removeprefix("tests/")
    marked = system_modules()
    assert left_out in marked
    marked.remove(left_out)
    assert {node.split("::")[0].removeprefix("tests/") for node in system} >= marked
    assert not {node.split("::")[0].removeprefix("tests/") for node in quick} & marked
    # A slow test of a quick module, marked on its own, is in the system tier.
    route_walk = "tests/web/test_route_walk.py::"
    assert any(node.startswith(route_walk) for node in quick)
    assert f"{route_walk}test_every_route_answers_malformed_input_without_a_5xx" in system
    # A sweep (more than SWEEP_CASES cases) runs every fourth case quick, the others in CI; a
    # test with few cases runs whole in the quick tier.
    sweep = "tests/web/test_listsource_api.py::test_off_every_request_is_404["
    cases = sorted(node for node in everything if node.startswith(sweep))
    assert len(cases) > SWEEP_CASES
    in_quick = [node for node in cases if node in quick]
    assert len(in_quick) == (len(cases) + 3) // 4
    groups: dict[str, set[str]] = {}
    for node in everything:
        if "[" in node:
            groups.setdefault(node.split("[")[0], set()).add(node)
    small = [nodes for nodes in groups.values() if len(nodes) <= SWEEP_CASES]
    assert all(nodes <= quick or nodes <= system for nodes in small)
    assert any(len(nodes) > 1 and nodes <= quick for nodes in small)


def test_property_tests_run_every_example_in_ci_and_a_quarter_in_the_quick_tier() -> None:
    before = settings.get_current_profile_name()
    try:
        settings.load_profile("ci")
        assert (examples(150), examples(25)) == (150, 25)
        assert settings.default.max_examples == 100
        settings.load_profile("quick")
        assert (examples(150), examples(25), examples(5)) == (37, 10, 5)
        assert settings.default.max_examples == 25
    finally:
        settings.load_profile(before)
    assert "export HYPOTHESIS_PROFILE=ci" in (ROOT / ".ci" / "run").read_text()
