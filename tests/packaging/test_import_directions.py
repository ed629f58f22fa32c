"""Imports point down the layers (docs/contributing/architecture.md, "Layers"): the edges (command
line, web, sync runner, gunicorn runner) over the service, the service over the storage contract
and the models, and the small shared parts (the HTTP client, observability) below their users.

The graph is the source's own, read with ``ast``: every ``import`` statement counts, at module
level, inside a function or under ``if TYPE_CHECKING:``. Third-party modules are kept by name,
so a dependency such as httpx is an arrow like any other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.source_imports import import_statements, module_files

pytestmark = pytest.mark.database_independent

PACKAGE_DIR = ROOT / "src" / "newsletter_connector"
PACKAGE = "newsletter_connector"
IMPORTING = f"{PACKAGE}.service.importing"


def imports_of(package_dir: Path) -> dict[str, set[str]]:
    """Module -> every dotted name it imports: a module (``from a import b`` names ``a.b`` when
    that is one of ours) or a third-party name as written."""
    modules = module_files(package_dir)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        targets: set[str] = set()
        for source, names in import_statements(name, path, is_package):
            targets.add(source)
            targets.update(
                f"{source}.{imported}" for imported in names if f"{source}.{imported}" in modules
            )
        graph[name] = targets
    return graph


def within(name: str, *packages: str) -> bool:
    """Whether ``name`` is one of ``packages`` or a module inside one."""
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def arrows(
    graph: dict[str, set[str]], sources: tuple[str, ...], targets: tuple[str, ...]
) -> list[str]:
    """Every ``importer -> imported`` from a module of ``sources`` to one of ``targets``."""
    return sorted(
        f"{importer} -> {imported}"
        for importer, imported_names in graph.items()
        if within(importer, *sources)
        for imported in imported_names
        if within(imported, *targets)
    )


def private_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a private module (``_name.py``) from outside the package that holds it."""
    found = []
    for importer, imported_names in graph.items():
        for imported in imported_names:
            package, _, last = imported.rpartition(".")
            private = last.startswith("_") and not last.startswith("__")
            if private and imported in graph and not within(importer, package):
                found.append(f"{importer} -> {imported}")
    return sorted(found)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return imports_of(PACKAGE_DIR)


def ours(*names: str) -> tuple[str, ...]:
    return tuple(f"{PACKAGE}.{name}" for name in names)


def test_storage_imports_no_http_client_and_nothing_above_it(graph: dict[str, set[str]]) -> None:
    above = ("httpx", "httpcore", *ours("service", "web", "sync", "cli"))
    assert arrows(graph, ours("storage"), above) == []


def test_the_service_imports_no_edge(graph: dict[str, set[str]]) -> None:
    # "Test connection" (service/connection_check.py) builds the HTTP client of http_client/,
    # never the sync runner's modules.
    edges = ours("web", "cli", "sync", "gunicorn_app")
    assert arrows(graph, ours("service"), edges) == []


def test_the_http_client_sits_below_its_users(graph: dict[str, set[str]]) -> None:
    users = ours("sync", "service", "web", "cli")
    assert arrows(graph, ours("http_client"), users) == []


def test_observability_imports_no_runner_or_edge(graph: dict[str, set[str]]) -> None:
    edges = ours("gunicorn_app", "cli", "web", "sync")
    assert arrows(graph, ours("observability"), edges) == []


def test_no_private_module_is_imported_from_outside_its_package(
    graph: dict[str, set[str]],
) -> None:
    assert private_imports(graph) == []


def test_only_the_facade_and_the_edges_import_the_import_package(
    graph: dict[str, set[str]],
) -> None:
    importers = {
        importer
        for importer, imported_names in graph.items()
        if not within(importer, IMPORTING) and any(within(i, IMPORTING) for i in imported_names)
    }
    assert importers, "nothing imports the import package: is IMPORTING still its name?"
    allowed = {f"{PACKAGE}.service"}
    assert (
        sorted(i for i in importers if i not in allowed and not within(i, *ours("cli", "web")))
        == []
    )


def test_the_docs_generator_is_no_module_of_the_package(graph: dict[str, set[str]]) -> None:
    assert f"{PACKAGE}.reference" not in graph
    assert (ROOT / "tests" / "support" / "reference_pages.py").is_file()
    assert arrows(graph, (PACKAGE,), ("tests", "scripts", "docs")) == []


def test_the_graph_sees_each_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    files = {
        "__init__.py": "",
        "storage/__init__.py": "from . import _rows\n",
        "storage/_rows.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import httpx\n"
        ),
        "storage/send.py": "def send():\n    from ..service.jobs import run\n",
        "service/__init__.py": "",
        "service/jobs.py": "from ..storage._rows import Row\n",
    }
    for relative, source in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    graph = imports_of(package)
    assert arrows(graph, ("pkg.storage",), ("httpx", "pkg.service")) == [
        "pkg.storage._rows -> httpx",
        "pkg.storage.send -> pkg.service.jobs",
    ]
    assert private_imports(graph) == ["pkg.service.jobs -> pkg.storage._rows"]
