"""The documentation site: every page is in the navigation, and it builds without warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.docblocks import ROOT, parse

# Builds the whole documentation site
pytestmark = [pytest.mark.system, pytest.mark.database_independent]


def nav_pages(entries: Any) -> list[str]:
    pages: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages.extend(nav_pages(value) if isinstance(value, list) else [value])
    return pages


def test_every_page_is_in_the_nav_once() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    in_nav = nav_pages(config["nav"])
    on_disk = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(in_nav) == on_disk


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as CI builds it: ``mkdocs build --strict``, which must succeed without warnings."""
    target = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr
    return target


def test_mkdocs_build_is_strict_and_clean(site: Path) -> None:
    assert (site / "security" / "index.html").exists()


def test_code_blocks_are_highlighted_at_build_time(site: Path) -> None:
    """Pygments marks up the code (no JavaScript, nothing fetched), styled by the site's own
    stylesheet."""
    page = (site / "getting-started" / "index.html").read_text()
    blocks = parse(ROOT / "docs" / "getting-started.md")
    assert page.count('<div class="highlight">') == len(blocks)
    assert '<span class="kn">from</span>' in page  # a Python keyword, as a token
    assert '<span class="nb">export</span>' in page  # a shell builtin
    assert 'href="../css/pygments.css"' in page
    assert "highlight.min.js" not in page
    assert ".highlight .kn {" in (site / "css" / "pygments.css").read_text()


def test_the_changelog_page_shows_the_root_changelog(site: Path) -> None:
    page = (site / "changelog" / "index.html").read_text()
    assert '<h2 id="unreleased">Unreleased</h2>' in page
    assert "--8&lt;--" not in page and "--8<--" not in page
