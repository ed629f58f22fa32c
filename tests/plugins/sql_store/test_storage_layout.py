"""The storage code's layout rules: the contract files stay readable in one sitting, and the SQL
store's speed paths (``plugins/sql_store/fast``) are reached only by the ``sql`` backend's
:class:`BuiltinSqlStorage`, so the plain :class:`SqlStorage` reads on its own."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.fast.parallel_reads import read_all
from newsletter_connector.plugins.sql_store.reads import read_in_turn
from tests.support.paths import ROOT

SRC = ROOT / "src" / "newsletter_connector"
SQL_STORE = SRC / "plugins" / "sql_store"


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, relative ones written with their leading dots."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
    return found


def test_no_contract_file_is_over_300_lines() -> None:
    long = {
        path.name: lines
        for path in (SRC / "storage").glob("*.py")
        if (lines := len(path.read_text().splitlines())) > 300
    }
    assert long == {}


def test_only_the_builtin_store_imports_the_speed_paths() -> None:
    reaching = sorted(
        path.name
        for path in SQL_STORE.glob("*.py")
        if any(
            name.startswith((".fast", "newsletter_connector.plugins.sql_store.fast"))
            for name in imports_of(path)
        )
    )
    assert reaching == ["builtin.py"]


def test_the_builtin_store_shares_its_analytics_reads_and_the_plain_one_reads_in_turn(
    newsletter_storage: Any, newsletter_database_url: str
) -> None:
    plain = SqlStorage(make_engine(newsletter_database_url))
    try:
        with plain.transaction(write=False) as uow:
            assert uow.analytics.read_all is read_in_turn
        with newsletter_storage.transaction(write=False) as uow:
            assert uow.analytics.read_all is read_all
    finally:
        plain.close()
