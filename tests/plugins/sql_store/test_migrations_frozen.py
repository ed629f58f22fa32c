"""Migrations import nothing from the live package: a revision does tomorrow exactly what it
did the day it was written, so any package code it runs is a frozen copy inside it (or in a
helper module beside the migrations that itself imports nothing from the package)."""

from __future__ import annotations

import ast
from pathlib import Path

from newsletter_connector.plugins.sql_store.migrate import MIGRATIONS_DIR

PACKAGE = "newsletter_connector"
#: The helper modules beside the revisions, which a revision may import (each is checked too).
HELPERS = {
    f"{PACKAGE}.plugins.sql_store.migrations.{path.stem}"
    for path in MIGRATIONS_DIR.glob("*.py")
    if path.stem not in ("__init__", "env")
}
#: Alembic's environment runs the live engine and tables by design; it is not a revision.
ENVIRONMENT = MIGRATIONS_DIR / "env.py"


def migration_modules() -> list[Path]:
    """Every revision, and every helper module beside the migrations."""
    return sorted(path for path in MIGRATIONS_DIR.rglob("*.py") if path != ENVIRONMENT)


def package_imports(path: Path) -> list[str]:
    """``line: module`` for each import of the package (absolute or relative) in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = ["." * node.level + (node.module or "")] if node.level else [node.module]
        else:
            continue
        found += [
            f"{node.lineno}: {module}"
            for module in modules
            if module
            and module not in HELPERS
            and (module.startswith(".") or module.split(".")[0] == PACKAGE)
        ]
    return found


def test_the_revisions_are_found() -> None:
    names = {path.name for path in migration_modules()}
    assert {"0001_initial_schema.py", "0006_repair_analytics_rows.py"} <= names


def test_no_migration_imports_the_package() -> None:
    offenders = {path.name: package_imports(path) for path in migration_modules()}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_check_sees_every_spelling_of_a_package_import(tmp_path: Path) -> None:
    module = tmp_path / "revision.py"
    module.write_text(
        "import sqlalchemy\n"
        "import newsletter_connector.log_redaction\n"
        "from newsletter_connector.model import wire_safe\n"
        "from .. import tables\n"
        "def upgrade():\n"
        "    from newsletter_connector import settings\n"
    )
    assert package_imports(module) == [
        "2: newsletter_connector.log_redaction",
        "3: newsletter_connector.model",
        "4: ..",
        "6: newsletter_connector",
    ]


def test_a_revision_may_import_a_helper_beside_the_migrations(tmp_path: Path) -> None:
    module = tmp_path / "revision.py"
    module.write_text(
        "from newsletter_connector.plugins.sql_store.migrations.portable_types import Instant\n"
        "from newsletter_connector.plugins.sql_store import tables\n"
    )
    assert package_imports(module) == ["2: newsletter_connector.plugins.sql_store"]
