"""Every threat of docs/security.md has a row in docs/contributing/security-tests.md, and the
tests that page names exist."""

from __future__ import annotations

import ast
import re

import pytest

from tests.support.paths import ROOT

# Reads every test module
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

NODE_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
SECURITY = ROOT / "docs" / "security.md"
SECURITY_TESTS = ROOT / "docs" / "contributing" / "security-tests.md"


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the first table in ``text``, as their cells."""
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [line[2:-2].split(" | ") for line in lines[1:] if not line.startswith("|---")]


def threats() -> list[str]:
    """The threats of the table under "Threats and what stops them" in docs/security.md."""
    text = SECURITY.read_text()
    table = text.split("## Threats and what stops them", 1)[1].split("\n## ", 1)[0]
    return [cells[0] for cells in table_rows(table)]


def proofs() -> dict[str, str]:
    """Each threat of docs/contributing/security-tests.md and the tests named for it."""
    return {cells[0]: " | ".join(cells[1:]) for cells in table_rows(SECURITY_TESTS.read_text())}


def test_the_user_page_names_no_test_outside_its_comments() -> None:
    visible = re.sub(r"<!--.*?-->", "", SECURITY.read_text(), flags=re.DOTALL)
    assert "tests/" not in visible


def test_every_threat_has_a_row_of_tests_on_the_contributing_page() -> None:
    listed = threats()
    assert len(listed) >= 30
    proved = proofs()
    missing = [threat for threat in listed if threat not in proved]
    assert not missing, f"threats of docs/security.md without a row of tests: {missing}"
    stale = [threat for threat in proved if threat not in listed]
    assert not stale, f"rows of docs/contributing/security-tests.md for no threat: {stale}"


def test_every_threat_names_a_test_that_exists() -> None:
    for threat, named_in in proofs().items():
        named = NODE_ID.findall(named_in)
        assert named, f"no test named for: {threat}"
        for path, name in named:
            tree = ast.parse((ROOT / path).read_text())
            defined = {
                node.name
                for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            assert name in defined, (
                f"{path}::{name} (named in docs/contributing/security-tests.md) does not exist"
            )
