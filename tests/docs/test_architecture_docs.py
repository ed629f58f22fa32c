"""The architecture pages stay in step with the code: the module map
(docs/contributing/architecture.md) names exactly the modules and subpackages of
``src/newsletter_connector`` (top level, and one level into the subpackages ``DETAILED``), and
the diagram of docs/architecture.md shows every part that page describes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.docblocks import ROOT

PACKAGE = ROOT / "src" / "newsletter_connector"
PAGE = ROOT / "docs" / "architecture.md"
MODULE_MAP = ROOT / "docs" / "contributing" / "architecture.md"
DIAGRAM = ROOT / "docs" / "images" / "architecture.svg"
#: The subpackages whose modules the map lists one by one.
DETAILED = ("cli", "plugins", "service", "storage", "sync", "web")
#: What the diagram must show (the text of its labels).
PARTS = (
    "Newsletter API",
    "List-source",
    "Connector export",
    "Reader pages",
    "Command line",
    "Service layer",
    "Storage",
    "Content",
    "Renderer",
    "Transport",
    "Outbox",
    "Sync runner",
    "Mailing platform",
)


def entries(folder: Path, prefix: str = "") -> set[str]:
    """The modules (``name.py``, ``__init__`` aside) and subpackages (``name/``: a folder
    holding Python) of ``folder``."""
    found = set()
    for path in folder.iterdir():
        if path.suffix == ".py" and path.name != "__init__.py":
            found.add(prefix + path.name)
        elif path.is_dir() and any(path.glob("*.py")):
            found.add(f"{prefix}{path.name}/")
    return found


def modules_in_the_code() -> set[str]:
    found = entries(PACKAGE)
    for name in DETAILED:
        found |= entries(PACKAGE / name, f"{name}/")
    return found


def modules_on_the_page() -> list[str]:
    module_map = MODULE_MAP.read_text().split("## Module map", 1)[1]
    return re.findall(r"^\| `([\w/.]+)` \|", module_map, re.MULTILINE)


def test_the_module_map_names_every_module_once_and_nothing_else() -> None:
    on_page = modules_on_the_page()
    assert len(on_page) == len(set(on_page)), "a module has two rows"
    in_code = modules_in_the_code()
    missing, stale = sorted(in_code - set(on_page)), sorted(set(on_page) - in_code)
    assert not missing, f"{MODULE_MAP.relative_to(ROOT)}: add a row to the module map for {missing}"
    assert not stale, f"{MODULE_MAP.relative_to(ROOT)} names modules that do not exist: {stale}"


def test_the_scanned_subpackages_are_the_ones_the_page_names() -> None:
    intro = MODULE_MAP.read_text().split("## Module map", 1)[1].split("###", 1)[0]
    assert re.findall(r"`(\w+)/`", intro) == [*DETAILED]


def test_entries_sees_modules_and_subpackages(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "a.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "page.html").write_text("")
    assert entries(tmp_path, "x/") == {"x/a.py", "x/pkg/"}


@pytest.mark.parametrize("part", PARTS)
def test_the_diagram_shows(part: str) -> None:
    texts = [t.text or "" for t in ET.parse(DIAGRAM).iter("{http://www.w3.org/2000/svg}text")]
    assert any(text.startswith(part) for text in texts), f"the diagram has no {part!r}"


def test_the_page_shows_the_diagram() -> None:
    assert "](images/architecture.svg)" in PAGE.read_text()
