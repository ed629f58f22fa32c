"""docs/first-day.md shows every screenshot the first day's browser walk saves, at both widths,
and no picture that walk does not make."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "first-day.md"
PICTURES = ROOT / "docs" / "images" / "first-day"


def test_the_page_shows_each_step_at_a_phones_and_a_desktops_width() -> None:
    shown = set(re.findall(r"\(images/first-day/([\w-]+\.png)\)", PAGE.read_text()))
    saved = {path.name for path in PICTURES.glob("*.png")}
    assert shown == saved
    steps = {name.rsplit("-", 1)[0] for name in saved}
    assert len(steps) >= 6
    assert saved == {f"{step}-{width}.png" for step in steps for width in (390, 1280)}
