"""Charts for the admin pages, drawn on the server as inline SVG with pygal.

Each chart is an ``<svg role="img">`` named by its ``<title>`` and described by its ``<desc>``
(the text alternative; the page shows the same figures in a table beside it). No script:
pygal's interactive script is left out, so a page with a chart runs nothing. No stylesheet:
the pages' Content-Security-Policy (``style-src 'self'``) refuses inline ``<style>`` and
``style`` attributes, so pygal's are replaced by SVG presentation attributes (fill, stroke,
font), which the policy leaves alone. The colours keep
at least 4.5:1 against the white background, and series differ by dash pattern too (solid,
dashed, dotted, dash-dot; the legend draws each series' line).

A range ending today ends on a day that is not over: its label says "so far", the stretch of
each line into it is drawn faint and dotted, and the description says why, so its smaller
figures read as a day in progress rather than a fall.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import date
from xml.etree import ElementTree

import pygal
from pygal.style import Style

#: Dark blue, dark orange, dark green, purple: each at least 4.5:1 on white.
SERIES_COLOURS = ("#1f4e79", "#a33a00", "#1e5e20", "#5b2a86")
#: Each series' dash pattern (``stroke-dasharray``; none for the first), in the same order.
SERIES_DASHES = ("", "9,4", "2,3", "9,3,2,3")
#: The width a chart is drawn at (its ``viewBox``), a phone's content width.
CHART_WIDTH = 320
#: The longest range drawn with a dot on each day; longer ones are lines alone.
DOTS_UP_TO_DAYS = 31

_STYLE = Style(
    background="#ffffff",
    plot_background="#ffffff",
    foreground="#000000",
    foreground_strong="#000000",
    foreground_subtle="#4a4a4a",
    colors=SERIES_COLOURS,
    font_family="system-ui, sans-serif",
    label_font_size=13,
    major_label_font_size=13,
    legend_font_size=13,
    title_font_size=15,
    opacity="1",
    opacity_hover="1",
)


#: Appended to the label of a day not over yet, and said in the description.
SO_FAR = "so far"
#: How the stretch of a line into a day not over yet is drawn: faint and dotted.
PARTIAL_STRETCH = {"stroke-dasharray": "2,5", "stroke-opacity": "0.55"}


def daily_lines(
    *,
    title: str,
    description: str,
    days: Sequence[date],
    series: Mapping[str, Sequence[int]],
    today: date | None = None,
) -> str:
    """A line chart of one value per day for each named series, as SVG markup.

    ``description`` is the text alternative (what the chart shows and where its figures are);
    every series has one value per day of ``days``. Ranges up to :data:`DOTS_UP_TO_DAYS` days
    mark each day with a dot (so a one-day range shows its value). When the last day is
    ``today`` it is marked as a day in progress (see the module's docstring).
    """
    partial = bool(days) and days[-1] == today
    every = max(1, len(days) // 3)  # a labelled day every ``every`` days
    chart = pygal.Line(
        style=_STYLE,
        js=(),
        # Drawn at a phone's width, so its text is not scaled below 12 px there; the page
        # caps how wide it grows on a desktop.
        width=CHART_WIDTH,
        height=260,
        show_dots=len(days) <= DOTS_UP_TO_DAYS,
        dots_size=3,
        fill=False,
        show_legend=len(series) > 1,
        legend_at_bottom=True,
        x_label_rotation=0,
        show_minor_x_labels=False,
        x_labels_major_every=None if partial else every,
        print_values=False,
        truncate_label=-1,
        truncate_legend=-1,
        margin=12,
        # Room for the last day's label ("Nov 28 (so far)"), centred on the right edge.
        margin_right=12 + (56 if partial else 20),
        explicit_size=False,
        disable_xml_declaration=True,
    )
    chart.x_labels = [day.strftime("%b %d") for day in days]
    if partial:
        chart.x_labels[-1] += f" ({SO_FAR})"
        # The day in progress is always labelled, whichever days the others are.
        labelled = chart.x_labels[: len(days) - every : every]
        chart.x_labels_major = [*labelled, chart.x_labels[-1]]
        description += f" The last day, {days[-1]:%B %d}, is today: its figures are {SO_FAR}."
    for name, values in series.items():
        if len(values) != len(days):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(days)} days")
        chart.add(name, list(values))
    chart.y_labels = whole_number_ticks(
        max((max(v, default=0) for v in series.values()), default=0)
    )
    svg = chart.render_tree()
    if partial:
        _mark_last_stretch(svg)
    return _accessible_svg(svg, title, description)


def _mark_last_stretch(svg: ElementTree.Element) -> None:
    """Split the last stretch off each series' line (``M x,y L x,y x,y ...``, pygal's form)
    into a path of its own drawn as :data:`PARTIAL_STRETCH`."""
    for parent in svg.iter():
        for line in list(parent):
            if _local(line.tag) != "path" or "reactive" not in line.get("class", "").split():
                continue
            points = line.get("d", "").replace("M", " ").replace("L", " ").split()
            if len(points) < 4:
                continue  # a single day: no stretch to draw
            pairs = [f"{points[i]} {points[i + 1]}" for i in range(0, len(points) - 1, 2)]
            line.set("d", f"M{pairs[0]} L" + " ".join(pairs[1:-1]))
            stretch = ElementTree.Element(
                line.tag,
                {**line.attrib, "d": f"M{pairs[-2]} L{pairs[-1]}", "class": "line partial"},
            )
            parent.insert(list(parent).index(line) + 1, stretch)
            if len(pairs) == 2:  # two days: the stretch is the whole line
                parent.remove(line)


def whole_number_ticks(top: int, *, most: int = 8) -> list[int]:
    """Ticks from 0 to at least ``top`` in steps of 1, 2 or 5 times a power of ten, at most
    ``most`` steps: counts are whole numbers, so no tick falls between two."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if top <= step * factor * most:
                size = step * factor
                return list(range(0, max(top, 1) + size, size))[: most + 1]
        step *= 10


def _accessible_svg(svg: ElementTree.Element, title: str, description: str) -> str:
    """``svg`` (pygal's tree: plain tag names, ``xmlns`` as an attribute) without scripts, as
    an image named by ``title`` and described by ``description``."""
    for parent in svg.iter():
        for child in [c for c in parent if _dropped(c)]:
            parent.remove(child)
    _present(svg, ())
    ident = f"chart-{uuid.uuid4().hex[:12]}"
    title_element = ElementTree.Element("title", {"id": f"{ident}-title"})
    title_element.text = title
    desc_element = ElementTree.Element("desc", {"id": f"{ident}-desc"})
    desc_element.text = description
    svg.insert(0, desc_element)
    svg.insert(0, title_element)
    svg.set("role", "img")
    svg.set("aria-labelledby", f"{ident}-title {ident}-desc")
    svg.set("focusable", "false")
    return ElementTree.tostring(svg, encoding="unicode")


def _dropped(element: ElementTree.Element) -> bool:
    """Scripts, the stylesheet, pygal's own "Pygal" title and the script-driven tooltip."""
    tag, classes = _local(element.tag), element.get("class", "").split()
    if tag in ("script", "style", "defs"):
        return True
    if tag == "title" and element.get("id") is None and element.text == "Pygal":
        return True
    return "tooltip-overlay" in classes


def _present(element: ElementTree.Element, outer: tuple[str, ...]) -> None:
    """Give ``element`` and its children the look pygal's stylesheet gave them; ``outer``
    holds the classes of the enclosing elements."""
    classes = element.get("class", "").split()
    tag = _local(element.tag)
    here = (*outer, *classes)
    if tag == "svg":
        element.attrib.update({"font-family": _STYLE.font_family, "font-size": "12"})
    if "background" in classes:
        element.set("fill", _STYLE.background)
    elif "line" in classes:
        element.set("fill", "none")
        series = _series_index(outer)
        if series is not None:
            _draw_series_line(element, series)
        elif "guide" in classes:
            element.attrib.update({"stroke": "#8a8a8a", "stroke-dasharray": "4,4"})
            if "x" in outer:
                element.set("stroke-opacity", "0")  # pygal shows these only on hover
        else:
            element.set("stroke", _STYLE.foreground)
    elif tag == "text":
        element.set("fill", _STYLE.foreground)
        if "axis" in outer:
            element.set("text-anchor", "middle" if "x" in outer else "end")
        if "legend" in outer:
            element.set("font-size", str(_STYLE.legend_font_size))
    for name in classes:
        if name.startswith("color-"):
            colour = SERIES_COLOURS[int(name[6:]) % len(SERIES_COLOURS)]
            element.attrib.update({"fill": colour, "stroke": colour})
            if tag == "rect" and "legend" in outer:
                _legend_line(element, int(name[6:]))
    if "style" in element.attrib:
        del element.attrib["style"]
    for child in element:
        _present(child, here)


def _series_index(classes: tuple[str, ...]) -> int | None:
    """The series number of the innermost ``color-N`` class, if any."""
    numbers = [int(name[6:]) for name in classes if name.startswith("color-")]
    return numbers[-1] if numbers else None


def _draw_series_line(element: ElementTree.Element, series: int) -> None:
    element.attrib.update(
        {"stroke": SERIES_COLOURS[series % len(SERIES_COLOURS)], "stroke-width": "2.5"}
    )
    dashes = SERIES_DASHES[series % len(SERIES_DASHES)]
    if "partial" in element.get("class", "").split():
        element.attrib.update(PARTIAL_STRETCH)
    elif dashes:
        element.set("stroke-dasharray", dashes)


def _legend_line(element: ElementTree.Element, series: int) -> None:
    """Turn a legend's colour square into a short stretch of the series' own line."""
    x, y = float(element.get("x", "0")), float(element.get("y", "0"))
    size = float(element.get("height", "12"))
    element.tag = "line"
    element.attrib = {
        "class": element.get("class", ""),
        "x1": f"{x - 6:g}",
        "x2": f"{x + size:g}",
        "y1": f"{y + size / 2:g}",
        "y2": f"{y + size / 2:g}",
    }
    _draw_series_line(element, series)


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]
