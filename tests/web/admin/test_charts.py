"""Admin charts: inline SVG that runs nothing, named and described for assistive technology,
in colours that keep their contrast."""

from __future__ import annotations

from datetime import date, timedelta
from xml.etree import ElementTree

import pytest

from newsletter_connector.web.charts import (
    PARTIAL_STRETCH,
    SERIES_COLOURS,
    SERIES_DASHES,
    daily_lines,
    whole_number_ticks,
)

DAYS = [date(2026, 11, 1) + timedelta(days=n) for n in range(30)]


def _chart(**series: list[int]) -> ElementTree.Element:
    svg = daily_lines(
        title="Signups per day",
        description="Signups per day over 30 days; the table below lists them.",
        days=DAYS,
        series=series or {"signups": list(range(30))},
    )
    return ElementTree.fromstring(svg)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def test_the_chart_is_an_image_named_and_described_by_its_own_elements() -> None:
    root = _chart()
    assert _local(root.tag) == "svg"
    assert root.get("role") == "img"
    title_id, desc_id = root.get("aria-labelledby", "").split()
    texts = {element.get("id"): element.text for element in root.iter()}
    assert texts[title_id] == "Signups per day"
    assert texts[desc_id] == "Signups per day over 30 days; the table below lists them."


def test_the_chart_runs_nothing() -> None:
    root = _chart()
    assert not [e for e in root.iter() if _local(e.tag) == "script"]
    assert not [name for e in root.iter() for name in e.attrib if name.lower().startswith("on")]


def _series_lines(root: ElementTree.Element) -> list[ElementTree.Element]:
    return [
        line
        for group in root.iter()
        if "series" in group.get("class", "").split()
        for line in group
        if _local(line.tag) == "path" and "line" in line.get("class", "").split()
    ]


def _points(path: ElementTree.Element) -> int:
    numbers = path.get("d", "").replace("M", " ").replace("L", " ").split()
    return len(numbers) // 2


def test_each_series_draws_one_line_through_one_point_per_day() -> None:
    root = _chart(signups=[1] * 30, unsubscribes=[2] * 30)
    lines = _series_lines(root)
    assert len(lines) == 2
    assert [_points(line) for line in lines] == [30, 30]


@pytest.mark.parametrize(("days", "dots"), [(1, 1), (31, 31), (32, 0), (92, 0)])
def test_short_ranges_mark_each_day_with_a_dot(days: int, dots: int) -> None:
    span = [date(2026, 1, 1) + timedelta(days=n) for n in range(days)]
    svg = daily_lines(title="t", description="d", days=span, series={"views": [3] * days})
    root = ElementTree.fromstring(svg)
    assert len([e for e in root.iter() if "dot" in e.get("class", "").split()]) == dots


def test_series_differ_by_dash_pattern_in_the_plot_and_the_legend() -> None:
    root = _chart(signups=[1] * 30, unsubscribes=[2] * 30, bounces=[0] * 30)
    lines = _series_lines(root)
    assert [line.get("stroke-dasharray") for line in lines] == [None, *SERIES_DASHES[1:3]]
    assert [line.get("stroke") for line in lines] == list(SERIES_COLOURS[:3])
    legend = [e for e in root.iter() if _local(e.tag) == "line" and "color-" in e.get("class", "")]
    assert [(e.get("stroke"), e.get("stroke-dasharray")) for e in legend] == [
        (SERIES_COLOURS[0], None),
        (SERIES_COLOURS[1], SERIES_DASHES[1]),
        (SERIES_COLOURS[2], SERIES_DASHES[2]),
    ]
    assert not [
        e for e in root.iter() if _local(e.tag) == "rect" and "color-" in e.get("class", "")
    ]


def _texts(root: ElementTree.Element) -> list[str]:
    return [e.text or "" for e in root.iter() if _local(e.tag) == "text"]


@pytest.mark.parametrize("days", [2, 7, 30, 90])
def test_a_range_ending_today_marks_today_as_so_far_not_as_a_fall(days: int) -> None:
    span = [date(2026, 1, 1) + timedelta(days=n) for n in range(days)]
    series = {"views": [40] * (days - 1) + [3], "clicks": [9] * (days - 1) + [1]}
    root = ElementTree.fromstring(
        daily_lines(title="t", description="d.", days=span, series=series, today=span[-1])
    )
    lines = _series_lines(root)
    whole = [line for line in lines if "partial" not in line.get("class", "").split()]
    stretches = [line for line in lines if "partial" in line.get("class", "").split()]
    assert [_points(line) for line in whole] == ([days - 1] * 2 if days > 2 else [])
    assert [_points(line) for line in stretches] == [2, 2]
    for stretch, colour in zip(stretches, SERIES_COLOURS, strict=False):
        assert stretch.get("stroke") == colour
        assert {name: stretch.get(name) for name in PARTIAL_STRETCH} == PARTIAL_STRETCH
    label = f"{span[-1]:%b %d} (so far)"
    assert label in _texts(root)  # labelled whichever days the others are
    texts = {element.get("id"): element.text for element in root.iter()}
    description = texts[root.get("aria-labelledby", "").split()[1]]
    assert description.endswith(
        f"The last day, {span[-1]:%B %d}, is today: its figures are so far."
    )


def test_a_range_ending_before_today_or_of_today_alone_draws_no_partial_stretch() -> None:
    before = ElementTree.fromstring(
        daily_lines(
            title="t",
            description="d",
            days=DAYS,
            series={"v": [1] * 30},
            today=DAYS[-1] + timedelta(1),
        )
    )
    assert not any("so far" in text for text in _texts(before))
    assert [_points(line) for line in _series_lines(before)] == [30]
    alone = ElementTree.fromstring(
        daily_lines(title="t", description="d", days=DAYS[:1], series={"v": [1]}, today=DAYS[0])
    )
    assert f"{DAYS[0]:%b %d} (so far)" in _texts(alone)
    assert not [line for line in _series_lines(alone) if "partial" in line.get("class", "")]


def test_a_series_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="'signups' has 29 values for 30 days"):
        daily_lines(title="t", description="d", days=DAYS, series={"signups": [1] * 29})


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("colour", SERIES_COLOURS)
def test_series_colours_keep_4_5_to_1_against_white(colour: str) -> None:
    assert (1.05) / (_luminance(colour) + 0.05) >= 4.5


def test_the_chart_needs_no_stylesheet_the_pages_policy_would_refuse() -> None:
    """``style-src 'self'`` blocks inline ``<style>`` and ``style`` attributes: the look is
    in presentation attributes instead (white background, black text, coloured series)."""
    root = _chart(signups=[1] * 30, unsubscribes=[2] * 30)
    assert not [e for e in root.iter() if _local(e.tag) in ("style", "defs")]
    assert not [e for e in root.iter() if "style" in e.attrib]
    backgrounds = [e for e in root.iter() if "background" in e.get("class", "").split()]
    assert backgrounds and all(e.get("fill") == "#ffffff" for e in backgrounds)
    series = [e for e in root.iter() if "series" in e.get("class", "").split()]
    fills = {e.get("fill") for e in series if list(e)}
    assert fills == {SERIES_COLOURS[0], SERIES_COLOURS[1]}
    texts = [e for e in root.iter() if _local(e.tag) == "text"]
    assert texts and all(e.get("fill") == "#000000" for e in texts)


@pytest.mark.parametrize(
    ("top", "ticks"),
    [
        (0, [0, 1]),
        (1, [0, 1]),
        (8, list(range(9))),
        (9, [0, 2, 4, 6, 8, 10]),
        (17, [0, 5, 10, 15, 20]),
        (2740, [0, 500, 1000, 1500, 2000, 2500, 3000]),
    ],
)
def test_ticks_are_whole_numbers_reaching_the_top(top: int, ticks: list[int]) -> None:
    assert whole_number_ticks(top) == ticks


def test_a_chart_of_small_counts_labels_its_axis_with_whole_numbers() -> None:
    root = _chart(clicks=[0] * 29 + [1])
    labels = [
        text.text
        for axis in root.iter()
        if {"axis", "y"} <= set(axis.get("class", "").split())
        for text in axis.iter()
        if _local(text.tag) == "text"
    ]
    assert labels == ["0", "1"]
