"""Code blocks of the docs: every fenced block is named (and executed by a test) or marked.

A block is preceded by one of these HTML comments (invisible in the built site):

- ``<!-- block: NAME -->``: tests run it; ``docblock("NAME")`` returns its code. A numbered
  family ``<!-- block: FAMILY:N -->`` is run as a whole by the test that names ``"FAMILY"``.
- ``<!-- not-run: REASON -->``: explicitly not runnable, with the reason.

A Python block is complete: it imports or defines every name it uses, so a reader can paste it
into a file and run it (``free_names`` finds what it lacks; ``run_block`` runs it in an empty
namespace). One that needs a service builds it from the ``NEWSLETTER_*`` variables, which
``settings_environment`` points at the test database.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

DOC_FILES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
_FENCE = re.compile(r"^(```+|~~~+)(\w*)")
_MARK = re.compile(r"^<!--\s*(block|not-run):\s*(.+?)\s*-->$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    code: str
    name: str | None
    not_run_reason: str | None


def parse(path: Path) -> list[Block]:
    """Every fenced code block of ``path`` with the marker comment above it, if any."""
    blocks: list[Block] = []
    lines = path.read_text().splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence, language = match.groups()
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines) and not lines[index].startswith(fence):
            body.append(lines[index])
            index += 1
        previous = start - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        mark = _MARK.match(lines[previous].strip()) if previous >= 0 else None
        blocks.append(
            Block(
                path=path,
                line=start + 1,
                language=language,
                code="\n".join(body) + "\n",
                name=mark.group(2) if mark and mark.group(1) == "block" else None,
                not_run_reason=mark.group(2) if mark and mark.group(1) == "not-run" else None,
            )
        )
        index += 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in DOC_FILES for block in parse(path)]


def docblock(name: str) -> str:
    """The code of the block named ``name`` (exactly one must exist)."""
    found = [block for block in all_blocks() if block.name == name]
    assert len(found) == 1, f"expected one docs block named {name!r}, found {len(found)}"
    return found[0].code


def free_names(code: str) -> list[str]:
    """Names ``code`` reads but never imports, defines, assigns or takes as a parameter
    (scopes ignored: a name bound anywhere in the block counts as bound)."""
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted(read - bound)


def run_block(name: str) -> dict[str, Any]:
    """Run the Python block ``name`` as a standalone module would run; its namespace after."""
    namespace: dict[str, Any] = {"__name__": f"docs_{name.replace('-', '_')}"}
    exec(compile(docblock(name), f"<docs:{name}>", "exec"), namespace)
    return namespace


def settings_environment(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """Set the ``NEWSLETTER_*`` variables so that ``Settings.load()`` gives ``settings``."""
    monkeypatch.setenv("NEWSLETTER_CONFIG", "")
    for field, value in settings.model_dump(exclude_defaults=True).items():
        secret = getattr(value, "get_secret_value", None)
        monkeypatch.setenv(f"NEWSLETTER_{field.upper()}", secret() if secret else str(value))


def same_shape(documented: Any, real: Any, where: str = "answer") -> None:
    """A documented answer has the keys and value types of the ``real`` one, all the way down
    (a list by its first item; ``null`` on either side matches any type): a renamed, dropped or
    retyped field fails. A ``"..."`` key stands for the fields the example leaves out."""
    numbers = {int, float}
    assert type(documented) is type(real) or {type(documented), type(real)} <= numbers, (
        f"{where}: documented {documented!r}, answered {real!r}"
    )
    if isinstance(real, dict):
        shown = set(documented) - {"..."}
        expected = set(real) if "..." not in documented else shown & set(real)
        assert shown == expected, f"{where}: documented {sorted(shown)}, answered {sorted(real)}"
        for name in shown:
            if documented[name] is not None and real[name] is not None:
                same_shape(documented[name], real[name], f"{where}.{name}")
    elif isinstance(real, list) and real and documented:
        same_shape(documented[0], real[0], f"{where}[0]")
