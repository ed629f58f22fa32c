"""A host is written from public names only: the example host's store (every module
``examples/wsgi_mount/host_store.py`` reaches) imports nothing of the package but the published
modules, and no underscored name from them; the rest of the example host site imports only
what the mounting guide offers a host."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.database_independent

EXAMPLE = ROOT / "examples" / "wsgi_mount"

#: What a host store may import from the package: the public face, the descriptors and errors,
#: the seam with its records and queries, and the helpers for a host's own table.
PUBLIC_MODULES = {
    "newsletter_connector",
    "newsletter_connector.descriptors",
    "newsletter_connector.errors",
    "newsletter_connector.storage.host",
    "newsletter_connector.storage.host_sql",
    "newsletter_connector.storage.records",
    "newsletter_connector.storage.subscriber_batches",
    "newsletter_connector.storage.subscriber_query",
}


def package_imports(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """``(module, name)`` for each name ``path`` imports from the package, and the example's
    own modules it imports (relative imports)."""
    names: list[tuple[str, str]] = []
    siblings: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                siblings.extend(
                    [node.module] if node.module else [alias.name for alias in node.names]
                )
            elif (node.module or "").split(".")[0] == "newsletter_connector":
                names.extend((node.module or "", alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(
                (alias.name, "")
                for alias in node.names
                if alias.name.split(".")[0] == "newsletter_connector"
            )
    return names, siblings


def host_store_modules() -> list[Path]:
    """``host_store.py`` and every example module it reaches."""
    seen: list[Path] = []
    pending = [EXAMPLE / "host_store.py"]
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.append(path)
        pending.extend(EXAMPLE / f"{name}.py" for name in package_imports(path)[1])
    return sorted(seen)


def private_imports(paths: list[Path]) -> list[str]:
    """Each import of a module outside :data:`PUBLIC_MODULES`, or of an underscored name."""
    found = []
    for path in paths:
        for module, name in package_imports(path)[0]:
            if module not in PUBLIC_MODULES or name.startswith("_"):
                found.append(f"{path.name}: from {module} import {name}")
    return found


#: What the rest of a host site may import besides: the app, its service and the runner beside
#: it (docs/mounting/).
HOST_SITE_MODULES = {
    "newsletter_connector.mounting",
    "newsletter_connector.service",
    "newsletter_connector.settings",
    "newsletter_connector.sync.background",
}


def test_the_example_host_store_imports_only_public_names() -> None:
    modules = host_store_modules()
    assert {path.name for path in modules} >= {"host_store.py", "host_subscribers.py"}
    assert private_imports(modules) == []


def test_the_example_host_site_imports_only_what_a_host_is_offered() -> None:
    found = [
        f"{path.name}: from {module} import {name}"
        for path in sorted(EXAMPLE.glob("*.py"))
        for module, name in package_imports(path)[0]
        if module not in PUBLIC_MODULES | HOST_SITE_MODULES or name.startswith("_")
    ]
    assert found == []


def test_an_import_from_inside_the_sql_store_is_caught(tmp_path: Path) -> None:
    store = tmp_path / "store.py"
    store.write_text(
        "from newsletter_connector.plugins.sql_store.subscribers import SqlSubscribers\n"
        "from newsletter_connector.storage.host_sql import _past\n"
        "from newsletter_connector.storage.host_sql import CommitHorizon\n"
    )
    assert private_imports([store]) == [
        "store.py: from newsletter_connector.plugins.sql_store.subscribers import SqlSubscribers",
        "store.py: from newsletter_connector.storage.host_sql import _past",
    ]
