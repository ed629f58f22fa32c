"""The built-in ``html`` renderer: email-safe markup, escaping, http(s)-only links, the footer
with postal address and the literal {{unsubscribe_url}}, no personalisation, and a plain-text
alternative. Rendered through real digest runs where the run matters, directly otherwise."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest

from newsletter_connector.plugin_manager import DEFAULT_PLUGINS, build_plugin_manager
from newsletter_connector.plugin_manager import issue_renderers as offered_renderers
from newsletter_connector.plugins.html_renderer import render_html, render_text
from newsletter_connector.settings import Settings
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support.paths import ROOT

PLACEHOLDER = "{{unsubscribe_url}}"
HOSTILE = "<script>alert(\"x\")</script> & 'quotes' {{first_name}} {% if %}"


class Page(HTMLParser):
    """Collects what the tests look at: tags, links, inline styles, visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.open: list[str] = []
        self.hrefs: list[str] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self.meta: dict[str, str] = {}
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append(tag)
        if tag not in ("meta", "br"):
            self.open.append(tag)
        if tag == "a":
            self.hrefs.append(attributes.get("href") or "")
        if attributes.get("style"):
            self.styles.append(attributes["style"] or "")
        if tag == "meta" and attributes.get("name"):
            self.meta[attributes["name"] or ""] = attributes.get("content") or ""
        if tag in ("style", "title"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1:]}>"
        self.open.pop()
        if tag in ("style", "title"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.text.append(data.strip())


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    assert page.open == [], f"unclosed tags: {page.open}"
    return page


@pytest.fixture
def settings() -> Settings:
    return Settings(
        base_url="https://news.example.org/newsletter",
        site_name="Silver Times",
        postal_address="Silver Times Media\n100 Main Street\nSpringfield, IL 62701",
    )


def issue(**sections: Any) -> dict[str, Any]:
    return {
        "kind": "daily",
        "cadence": "daily",
        "date": "2026-11-21",
        "subject": "Silver Times: Saturday, November 21, 2026",
        "site_url": "https://news.example.org",
        "postal_address": "Silver Times Media\n100 Main Street\nSpringfield, IL 62701",
        "sections": {k: v for k, v in sample_issue_content(**sections).items()},
    }


def test_html_is_registered_as_a_default_plugin() -> None:
    assert "newsletter_connector.plugins.html_renderer" in DEFAULT_PLUGINS
    renderer = {r.name: r for r in offered_renderers(build_plugin_manager())}["html"]
    assert renderer.render is render_html and renderer.render_text is render_text


def test_structure_is_email_safe(settings: Settings) -> None:
    html = render_html(issue(), settings)
    page = parse(html)
    assert html.startswith("<!DOCTYPE html>")
    assert "table" in page.tags and "div" in page.tags
    layout = re.findall(r"<table[^>]*>", html)
    assert layout and all('role="presentation"' in t for t in layout)
    assert not {"script", "img", "iframe", "form", "link", "video", "svg"} & set(page.tags)
    # Every block carries its own inline style; the only <style> block is a refinement.
    for tag in ("td", "p", "h1", "h2", "a"):
        assert re.search(rf"<{tag}\b[^>]*style=", html), tag
        assert not re.search(rf"<{tag}\b(?![^>]*style=)[^>]*>", html), f"<{tag}> without style"
    assert html.count("<style>") == 1


def test_large_type(settings: Settings) -> None:
    html = render_html(issue(), settings)
    sizes = [int(s) for s in re.findall(r"font-size:(\d+)px", html) if s != "1"]  # 1px preheader
    assert min(sizes) >= 17
    body = re.findall(r'<p class="nc-text" style="[^"]*font-size:(\d+)px', html)
    assert body and all(int(s) >= 20 for s in body)
    assert "line-height:1.6" in html


def test_dark_mode_safe(settings: Settings) -> None:
    html = render_html(issue(), settings)
    page = parse(html)
    assert page.meta["color-scheme"] == "light dark"
    assert page.meta["supported-color-schemes"] == "light dark"
    assert "@media (prefers-color-scheme: dark)" in html
    # Explicit colours on every text block and background on every cell, so clients that
    # invert colours do so consistently.
    for cell in re.findall(r"<td class=\"nc-card[^>]*>", html):
        assert 'bgcolor="#ffffff"' in cell and "background-color:#ffffff" in cell
    for block in re.findall(r"<(?:p|h1|h2) [^>]*>", html):
        assert re.search(r"color:#[0-9a-f]{6}", block), block


def test_every_content_text_is_escaped(settings: Settings) -> None:
    content = sample_issue_content()
    content["briefing"]["title"] = HOSTILE
    content["topics"][0]["label"] = HOSTILE
    content["topics"][0]["summary"] = HOSTILE
    content["topics"][0]["items"][0]["title"] = HOSTILE
    content["topics"][0]["items"][0]["source"] = HOSTILE
    content["on_this_day"][0]["text"] = HOSTILE
    content["puzzle_hint"] = HOSTILE
    data = issue()
    data["sections"] = content
    data["subject"] = HOSTILE
    html = render_html(data, settings)
    assert "<script" not in html and "{{first_name}}" not in html and "{%" not in html
    page = parse(html)
    assert "script" not in page.tags
    # Shown to the reader as written: 7 content texts plus the preheader.
    visible = [t for t in page.text if t == HOSTILE]
    assert len(visible) == 8
    assert "&lt;script&gt;" in html and "&#123;&#123;first_name&#125;&#125;" in html


def test_only_http_links(settings: Settings) -> None:
    data = issue()
    sections = data["sections"]
    sections["briefing"]["url"] = "javascript:alert(1)"
    sections["on_this_day"][0]["url"] = "data:text/html,<b>x</b>"
    sections["topics"][0]["items"][0]["url"] = "mailto:x@example.org"
    sections["topics"][0]["items"][1]["url"] = "http://plain.example.org/story"
    html = render_html(data, settings)
    page = parse(html)
    assert page.hrefs, "links expected"
    for href in page.hrefs:
        assert href == PLACEHOLDER or re.match(r"^https?://", href), href
    assert "javascript:" not in html and "data:text" not in html and "mailto:" not in html
    assert "http://plain.example.org/story" in page.hrefs
    # The texts of the dropped links are still there, unlinked.
    assert sections["briefing"]["title"] in page.text


def test_link_attributes_are_escaped(settings: Settings) -> None:
    data = issue()
    data["sections"]["briefing"]["url"] = 'https://e.example/?a=1&b="2"'
    html = render_html(data, settings)
    assert 'href="https://e.example/?a=1&amp;b=&#34;2&#34;"' in html
    assert 'https://e.example/?a=1&b="2"' in parse(html).hrefs


def test_footer_has_placeholder_and_postal_address(settings: Settings) -> None:
    html = render_html(issue(), settings)
    footer = html[html.rindex('class="nc-card nc-rule"') :]
    assert f'href="{PLACEHOLDER}"' in footer
    assert "Silver Times Media<br>100 Main Street<br>Springfield, IL 62701" in footer
    assert 'href="https://news.example.org"' in footer


def test_the_placeholder_is_the_only_template_syntax(settings: Settings) -> None:
    """No personalisation: no name, no ZIP, nothing for the platform to fill in but the
    unsubscribe link."""
    for render in (render_html, render_text):
        out = render(issue(), settings)
        assert re.findall(r"\{\{.*?\}\}", out) == [PLACEHOLDER]
        assert "{%" not in out and "*|" not in out
        lowered = out.lower()
        for personal in ("dear ", "first_name", "zip", "hello "):
            assert personal not in lowered


def test_no_postal_address_no_address_block(settings: Settings) -> None:
    data = issue()
    data["postal_address"] = None
    html = render_html(data, settings)
    assert "Springfield" not in html
    assert PLACEHOLDER in html


def test_empty_sections_are_left_out(settings: Settings) -> None:
    html = render_html(issue(on_this_day=[], puzzle_hint="", topics=[]), settings)
    text = parse(html).text
    assert "On this day" not in text and "Puzzle hint" not in text
    assert "Today\u2019s briefing" in text


def test_every_section_is_rendered(settings: Settings) -> None:
    content = sample_issue_content()
    page = parse(render_html(issue(), settings))
    assert content["briefing"]["title"] in page.text
    assert content["briefing"]["url"] in page.hrefs
    assert content["puzzle_hint"] in page.text
    for entry in content["on_this_day"]:
        assert entry["text"] in page.text and str(entry["year"]) in page.text
        assert entry["url"] in page.hrefs
    for topic in content["topics"]:
        assert topic["label"] in page.text and topic["summary"] in page.text
        for item in topic["items"]:
            assert item["title"] in page.text and item["source"] in page.text
            assert item["url"] in page.hrefs
    assert "Saturday, November 21, 2026" in " ".join(page.text)


def test_plain_text_alternative(settings: Settings) -> None:
    content = sample_issue_content()
    content["briefing"]["title"] = "Rates & <fees> {{first_name}}"
    data = issue()
    data["sections"] = content
    text = render_text(data, settings)
    assert "<" not in text.replace("<fees>", "")  # no markup, and content is not HTML-escaped
    assert "Rates & <fees> { {first_name} }" in text
    assert f"Unsubscribe: {PLACEHOLDER}" in text
    assert "Silver Times Media\n100 Main Street\nSpringfield, IL 62701" in text
    for topic in content["topics"]:
        assert topic["label"].upper() in text
        for item in topic["items"]:
            assert f"* {item['title']} ({item['source']})\n  {item['url']}" in text
    assert "ON THIS DAY\n* 1969: Apollo 12" in text
    assert f"PUZZLE HINT\n{content['puzzle_hint']}" in text


def test_text_drops_non_http_links(settings: Settings) -> None:
    data = issue()
    data["sections"]["briefing"]["url"] = "javascript:alert(1)"
    assert "javascript:" not in render_text(data, settings)


def test_digest_run_stores_both_bodies(newsletter_service: Any) -> None:
    record = newsletter_service.issues.run_digest("daily", "2026-11-21", sample_issue_content())
    assert record.html == render_html(
        {
            "kind": "daily",
            "cadence": "daily",
            "date": "2026-11-21",
            "subject": record.subject,
            "site_url": record.site_url,
            "postal_address": record.postal_address,
            "sections": record.sections,
        },
        newsletter_service.settings,
    )
    assert record.text and PLACEHOLDER in record.text
    assert "1 Test Street, Testville, TS 00000" in record.html


def test_templates_are_package_data() -> None:
    """The templates ship in the wheel: pyproject's package-data globs cover them."""
    import fnmatch
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["newsletter_connector"]
    package = ROOT / "src" / "newsletter_connector"
    templates = list((package / "plugins" / "issue_templates").iterdir())
    assert {t.name for t in templates} >= {"issue.html", "issue.txt"}
    for template in templates:
        relative = template.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), relative


def test_an_edition_in_spanish_has_its_fixed_words_and_dates_in_spanish(
    settings: Settings,
) -> None:
    """The site's language sets the edition's own words; the editor's content stays as
    written, and the platform's placeholder is untouched."""
    spanish = settings.model_copy(update={"language": "es"})
    content = issue(on_this_day=[{"year": 1969, "text": "Apollo 11 lands"}], puzzle_hint="Think")
    html = render_html(content, spanish)
    text = render_text(content, spanish)
    page = parse(html)
    shown = " ".join(page.text)
    assert '<html lang="es"' in html
    for words in ("El resumen de hoy", "Un día como hoy", "Pista del pasatiempo", "Resumen diario"):
        assert words in shown and words.upper() in text.upper(), words
    assert "sábado, 21 de noviembre de 2026" in shown  # the date in the language's format
    assert "Recibe este correo porque se suscribió en" in shown
    assert "Cancelar la suscripción" in shown and PLACEHOLDER in html and PLACEHOLDER in text
    assert "Apollo 11 lands" in shown  # content is not translated
    for english in ("Today\N{RIGHT SINGLE QUOTATION MARK}s briefing", "On this day", "Puzzle hint"):
        assert english not in html and english not in text
