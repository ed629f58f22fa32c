"""The reader pages' templates and stylesheet ship in the wheel (package data)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "src" / "newsletter_connector" / "web" / "pages"


def test_wheel_contains_every_template_and_the_stylesheet(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"),
            *("-w", str(tmp_path / "dist"), str(source)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        f"newsletter_connector/web/pages/templates/{path.name}"
        for path in (PAGES / "templates").glob("*.html")
    } | {"newsletter_connector/web/pages/static/reader.css"}
    assert len(expected) > 10
    assert expected <= names, sorted(expected - names)
