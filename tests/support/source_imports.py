"""Reading a package's imports from its source with ``ast`` (the import-cycle and
import-direction tests): every ``import`` statement counts, at module level, inside a function
or under ``if TYPE_CHECKING:``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def module_files(package_dir: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name (a package by its own name) -> (file, whether it is a package's
    ``__init__``)."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def import_statements(
    name: str, path: Path, is_package: bool
) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each import statement of module ``name`` as ``(source, names)``: ``import a.b`` is
    ``("a.b", ())``, ``from .x import y, z`` is ``(the absolute name of .x, ("y", "z"))``."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = here[: len(here) - node.level + 1]
                source = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield source, tuple(alias.name for alias in node.names)
