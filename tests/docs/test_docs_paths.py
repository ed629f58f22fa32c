"""Every file path the docs name exists, so a moved module or test cannot leave a stale pointer.

Checked: Python paths in the docs and the README, read from the repository root (``src/...``,
``tests/...``, ``examples/...``, ...) or from the package (``plugins/sql_store/engine.py``,
``web/admin/acts.py``); and every page under ``docs/`` that the code, the tests, the tools or
the docs themselves name. A bare file name (``engine.py``) is not checked: the sentence around
it says where it lives.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.docblocks import DOC_FILES, ROOT

PACKAGE = ROOT / "src" / "newsletter_connector"
#: Folders at the repository root whose Python files the docs name.
ROOT_FOLDERS = ("src", "tests", "examples", "bench", "scripts")
#: Placeholders standing for any file, not naming one.
PLACEHOLDERS = {"tests/test_x.py"}
#: The folders whose Python files name pages of the docs.
CITING_CODE = ("src", "tests", "bench", "scripts", "examples")

_PYTHON_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.py)\b")
_DOCS_PAGE = re.compile(r"(?<![\w/.-])docs/[\w/.-]+\.md\b")


def named_python_paths(text: str) -> list[str]:
    """The Python paths ``text`` names that a reader would look up: rooted at the repository or
    at the package, placeholders aside."""
    subpackages = {path.name for path in PACKAGE.iterdir() if path.is_dir()}
    return [
        path
        for path in _PYTHON_PATH.findall(text)
        if path.split("/")[0] in (*ROOT_FOLDERS, *subpackages) and path not in PLACEHOLDERS
    ]


def exists(path: str) -> bool:
    return (ROOT / path).is_file() or (PACKAGE / path).is_file()


def test_named_python_paths_are_found() -> None:
    text = "see `plugins/sql_store/engine.py`, tests/test_x.py, my_site/views.py and engine.py"
    assert named_python_paths(text) == ["plugins/sql_store/engine.py"]


def test_every_python_path_the_docs_name_exists() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}: {path}"
        for doc in DOC_FILES
        for path in named_python_paths(doc.read_text())
        if not exists(path)
    ]
    assert not missing, f"the docs name files that do not exist: {missing}"


def citing_files() -> list[Path]:
    """The code, the tools and the docs: every file that may name a page of the docs."""
    code = [path for folder in CITING_CODE for path in sorted((ROOT / folder).rglob("*.py"))]
    return [*code, *DOC_FILES, ROOT / ".ci" / "run", ROOT / "mkdocs.yml"]


def test_every_docs_page_named_exists() -> None:
    missing = [
        f"{path.relative_to(ROOT)}: {page}"
        for path in citing_files()
        for page in _DOCS_PAGE.findall(path.read_text())
        if not (ROOT / page).is_file()
    ]
    assert not missing, f"pages of the docs that do not exist: {missing}"
