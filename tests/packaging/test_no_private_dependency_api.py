"""The package uses its dependencies only through their public interfaces: no module under
src/ reads or assigns an attribute that another package keeps private (``x._name``), nor
imports from a private module (``httpx._transports``).

An attribute starting with ``_`` is ours when our own code defines that name (a method,
``self._name = ...``, a ``__slots__`` entry, a module-level name); a namedtuple's documented
methods (``_replace``, ...) are public despite their underscore. For httpx and httpcore the
check is strict: a private name either of them defines is never used on anything but
``self``/``cls``, even where our own code defines the same name.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import pytest

from tests.support.paths import ROOT

# Reads every source file
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

SRC = ROOT / "src" / "newsletter_connector"
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_field_defaults", "_make"})


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(SRC.rglob("*.py"))}


def names_we_define(modules: dict[Path, ast.Module]) -> set[str]:
    """Every underscore name the package itself defines, anywhere."""
    defined: set[str] = set()
    for tree in modules.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    defined.add(node.attr)
            elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__slots__" for target in node.targets
            ):
                defined |= {
                    const.value
                    for const in ast.walk(node.value)
                    if isinstance(const, ast.Constant) and isinstance(const.value, str)
                }
    return {name for name in defined if private(name)}


@cache
def httpx_and_httpcore_private_names() -> frozenset[str]:
    """Every underscore name httpx or httpcore defines in its own source."""
    names: set[str] = set()
    for package in ("httpx", "httpcore"):
        folder = Path(importlib.import_module(package).__file__ or "").parent
        names |= names_we_define(
            {path: ast.parse(path.read_bytes()) for path in folder.rglob("*.py")}
        )
    return frozenset(names)


def foreign_private_uses(modules: dict[Path, ast.Module]) -> list[str]:
    strict = httpx_and_httpcore_private_names()
    ours = (names_we_define(modules) | NAMEDTUPLE_API) - strict
    found = []
    for path, tree in modules.items():
        where = path.relative_to(SRC.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and private(node.attr):
                on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if not on_self and node.attr not in ours:
                    found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if any(private(part) for part in node.module.split(".")):
                    found.append(f"{where}:{node.lineno}: from {node.module} import ...")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if any(private(part) for part in alias.name.split(".")):
                        found.append(f"{where}:{node.lineno}: import {alias.name}")
    return found


def test_src_touches_no_private_attribute_or_module_of_a_dependency() -> None:
    assert foreign_private_uses(trees()) == []


@pytest.mark.parametrize(
    "source",
    [
        "transport._pool = pool",
        "x = client._transport",
        "import httpx\nhttpx.HTTPTransport()._pool.close()",
        "from httpx._transports.default import HTTPTransport",
        "import httpcore._sync",
    ],
)
def test_the_scan_finds_a_private_use(source: str) -> None:
    assert foreign_private_uses({SRC / "probe.py": ast.parse(source)})


def test_httpx_private_names_stay_forbidden_even_when_we_define_the_same_name() -> None:
    source = (
        "class A:\n    def __init__(self, client):\n        self._transport = client._transport"
    )
    assert httpx_and_httpcore_private_names() >= {"_pool", "_transport"}
    assert foreign_private_uses({SRC / "probe.py": ast.parse(source)})


@pytest.mark.parametrize(
    "source",
    [
        "class A:\n    def __init__(self):\n        self._held = 1\n"
        "    def f(self, other):\n        return self._held == other._held",
        "parts = parts._replace(netloc='x')",
        "x = value.__class__",
    ],
)
def test_the_scan_allows_our_own_and_documented_names(source: str) -> None:
    assert foreign_private_uses({SRC / "probe.py": ast.parse(source)}) == []
