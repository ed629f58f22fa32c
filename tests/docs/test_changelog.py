"""CHANGELOG.md keeps the Keep a Changelog form, its newest release is the version the package
declares, and the docs site shows it (docs/changelog.md includes it)."""

from __future__ import annotations

import re
import sys

from tests.support.docblocks import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

CHANGELOG = ROOT / "CHANGELOG.md"
#: The kinds of change Keep a Changelog names.
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def headings(level: int) -> list[str]:
    return re.findall(rf"^{'#' * level} (.+)$", CHANGELOG.read_text(), re.MULTILINE)


def test_unreleased_comes_first_then_the_releases_newest_first() -> None:
    assert headings(1) == ["Changelog"]
    sections = headings(2)
    assert sections[0] == "Unreleased"
    versions = [tuple(int(part) for part in s.split(".")) for s in sections[1:]]
    assert versions and all(re.fullmatch(r"\d+\.\d+\.\d+", s) for s in sections[1:])
    assert versions == sorted(versions, reverse=True)


def test_the_newest_release_is_the_declared_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert headings(2)[1] == project["version"]


def test_changes_are_grouped_by_the_standard_kinds() -> None:
    kinds = headings(3)
    assert kinds and set(kinds) <= KINDS, f"unknown kinds: {set(kinds) - KINDS}"


def test_the_docs_page_includes_the_changelog() -> None:
    page = (ROOT / "docs" / "changelog.md").read_text()
    assert '--8<-- "CHANGELOG.md"' in page.splitlines()
