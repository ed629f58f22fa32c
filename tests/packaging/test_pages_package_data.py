"""Every file of the package that is not Python (templates, stylesheets, scripts, migration
template) ships in the wheel as package data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = [pytest.mark.system, pytest.mark.database_independent]


def test_wheel_contains_every_file_that_is_not_python(tmp_path: Path) -> None:
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
    package = ROOT / "src" / "newsletter_connector"
    expected = {
        f"newsletter_connector/{path.relative_to(package).as_posix()}"
        for path in package.rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    }
    assert {
        "newsletter_connector/web/pages/static/reader.css",
        "newsletter_connector/web/admin/templates/layout.html",
        "newsletter_connector/web/admin/static/admin.css",
    } <= expected
    assert expected <= names, sorted(expected - names)
