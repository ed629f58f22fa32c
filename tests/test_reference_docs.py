"""The generated reference pages in docs/ are current (regenerate with the module's main)."""

from __future__ import annotations

from pathlib import Path

import pytest

from newsletter_connector.reference import PAGES
from newsletter_connector.settings import Settings

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("filename", sorted(PAGES))
def test_generated_page_is_current(filename: str) -> None:
    committed = (DOCS / filename).read_text()
    assert committed == PAGES[filename](), (
        f"docs/{filename} is stale: run `python -m newsletter_connector.reference docs`"
    )


def test_every_setting_is_described() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} has no description"
