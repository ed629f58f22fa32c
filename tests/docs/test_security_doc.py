"""The threats table of docs/security.md names tests that exist."""

from __future__ import annotations

import ast
import re

import pytest

from tests.support.paths import ROOT

# Reads every test module
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

NODE_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def threat_rows() -> list[str]:
    text = (ROOT / "docs" / "security.md").read_text()
    table = text.split("## Threats and what stops them", 1)[1].split("\n## ", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and "`tests/" in line]


def test_every_threat_names_a_test_that_exists() -> None:
    rows = threat_rows()
    assert len(rows) >= 30
    for row in rows:
        named = NODE_ID.findall(row)
        assert named, f"no test named in: {row}"
        for path, name in named:
            tree = ast.parse((ROOT / path).read_text())
            defined = {
                node.name
                for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            assert name in defined, f"{path}::{name} (named in docs/security.md) does not exist"
