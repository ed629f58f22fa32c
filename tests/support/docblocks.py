"""Code blocks of the docs: every fenced block is named (and executed by a test) or marked.

A block is preceded by one of these HTML comments (invisible in the built site):

- ``<!-- block: NAME -->``: tests run it; ``docblock("NAME")`` returns its code. A numbered
  family ``<!-- block: FAMILY:N -->`` is run as a whole by the test that names ``"FAMILY"``.
- ``<!-- not-run: REASON -->``: explicitly not runnable, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
