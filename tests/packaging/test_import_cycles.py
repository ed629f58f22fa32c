"""No module of the package imports, directly or through others, a module that imports it back.

The graph is read from the source with ``ast``: every ``import`` statement counts, at module
level or inside a function or an ``if TYPE_CHECKING:`` block, because an import moved into a
function to dodge a cycle still makes two modules depend on each other. Importing ``a.b.c`` also
runs the packages ``a`` and ``a.b``, so those count as imported too, except the importer's own
enclosing packages. Only the package's own modules are nodes: third-party imports never are.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest

import newsletter_connector
from tests.support.source_imports import import_statements, module_files

# Reads every source file
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

PACKAGE_DIR = Path(newsletter_connector.__file__).parent


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the package's own modules it imports (anywhere in its source)."""
    modules = module_files(package_dir)

    def own_module(dotted: str) -> str | None:
        """The longest prefix of ``dotted`` that is one of our modules (``a.b.name`` -> ``a.b``)."""
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        targets: set[str] = set()
        for source, names in import_statements(name, path, is_package):
            dotted = [f"{source}.{imported}" for imported in names] if names else [source]
            targets.update(target for each in dotted if (target := own_module(each)))
        enclosing = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        for target in list(targets):
            parts = target.split(".")
            targets.update(
                parent
                for i in range(1, len(parts))
                if (parent := ".".join(parts[:i])) in modules and parent not in enclosing
            )
        targets.discard(name)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A shortest cycle through each module that has one, as a module path that starts and
    ends on the same module (the first in sorted order); each cycle once."""

    def shortest_path(start: str, goal: str, within: set[str]) -> list[str]:
        previous: dict[str, str] = {}
        queue = deque([start])
        while queue:
            current = queue.popleft()
            for following in sorted(graph[current] & within):
                if following == goal:
                    path = [goal, current]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1]
                if following not in previous:
                    previous[following] = current
                    queue.append(following)
        raise AssertionError(f"no path from {start} to {goal}")  # pragma: no cover

    def reachable(start: str) -> set[str]:
        seen, queue = set(), deque([start])
        while queue:
            for following in graph[queue.popleft()] - seen:
                seen.add(following)
                queue.append(following)
        return seen

    reach = {name: reachable(name) for name in graph}
    found: list[list[str]] = []
    for name in sorted(graph):
        if name not in reach[name]:
            continue
        group = {other for other in reach[name] if name in reach[other]}
        cycle = shortest_path(name, name, group)[:-1]
        start = cycle.index(min(cycle))
        cycle = [*cycle[start:], *cycle[:start], cycle[start]]
        if cycle not in found:
            found.append(cycle)
    return found


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph(PACKAGE_DIR))
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_the_graph_holds_imports_of_every_form() -> None:
    graph = import_graph(PACKAGE_DIR)
    # ``from . import sync`` in the cli package, and ``from ..sync.runner import ...`` below it
    assert "newsletter_connector.cli.sync" in graph["newsletter_connector.cli"]
    assert "newsletter_connector.sync.runner" in graph["newsletter_connector.cli.sync"]
    # ...which also runs the ``sync`` package, not the importer's own ``cli`` package
    assert "newsletter_connector.sync" in graph["newsletter_connector.cli.sync"]
    assert "newsletter_connector.cli" not in graph["newsletter_connector.cli.sync"]
    # an import inside a function
    assert "newsletter_connector.sync.background" in graph["newsletter_connector.gunicorn_app"]
    # third-party modules are not nodes
    assert all(target.startswith("newsletter_connector") for t in graph.values() for target in t)


def write_package(root: Path, files: dict[str, str]) -> Path:
    for relative, source in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root / "pkg"


def test_a_command_module_importing_its_group_back_inside_a_function_is_a_cycle(
    tmp_path: Path,
) -> None:
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "cli/__init__.py": "from . import digest\n\ndef fail(): ...\n",
            "cli/digest.py": "def run():\n    from . import fail\n    fail()\n",
        },
    )
    assert cycles(import_graph(package)) == [["pkg.cli", "pkg.cli.digest", "pkg.cli"]]


def test_type_checking_absolute_and_package_imports_make_cycles(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
            "b.py": "import pkg.a\nimport json\n",
            "store/__init__.py": "from .sql import Store\n",
            "store/sql.py": "from ..service import Service\n",
            "service.py": "from .store.tables import TABLE\n",
            "store/tables.py": "TABLE = 1\n",
        },
    )
    assert cycles(import_graph(package)) == [
        ["pkg.a", "pkg.b", "pkg.a"],
        ["pkg.service", "pkg.store", "pkg.store.sql", "pkg.service"],
    ]


def test_a_package_importing_its_own_modules_is_no_cycle(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "__init__.py": "from .cli import main\n",
            "cli/__init__.py": "from . import sync\nfrom .context import State\n",
            "cli/context.py": "from ..service import Service\nclass State: ...\n",
            "cli/sync.py": "from .context import State\nfrom ..sync.runner import Runner\n",
            "sync/__init__.py": "",
            "sync/runner.py": "from ..service import Service\nclass Runner: ...\n",
            "service.py": "class Service: ...\n",
        },
    )
    assert cycles(import_graph(package)) == []
