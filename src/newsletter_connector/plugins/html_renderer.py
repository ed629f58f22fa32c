"""The built-in issue renderer ``html``: email-safe HTML plus a plain-text alternative.

Email-safe (presentation tables, inline styles, no images, scripts or web fonts), large type,
dark-mode safe; docs/issues.md says what each means. Content can never form a template
placeholder (``{{name}}``): ``{`` and ``}`` are escaped. Links only for absolute http(s) URLs.
The footer carries the literal ``{{unsubscribe_url}}`` the platform fills in per recipient.
The edition's fixed words (headings, footer, the kind of edition, its dates) are in the site's
``language`` (:mod:`newsletter_connector.i18n`); the content is the editor's, as written.
"""

from __future__ import annotations

import gettext
import re
from datetime import date as Date
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from ..descriptors import IssueRenderer
from ..hookspecs import hookimpl
from ..i18n import N_, edition_date, edition_translations
from ..model.issue import is_http_url
from ..settings import Settings

TEMPLATE_PACKAGE = "newsletter_connector"
TEMPLATE_FOLDER = "plugins/issue_templates"
HTML_TEMPLATE = "issue.html"
TEXT_TEMPLATE = "issue.txt"

_KIND_LABELS = {
    "daily": N_("Daily briefing"),
    "weekly": N_("Weekly roundup"),
    "manual": N_("Special edition"),
    "test": N_("Test issue"),
}
_ADJACENT_BRACES = re.compile(r"([{}])(?=[{}])")


def _html_finalize(value: Any) -> Any:
    """Escape every interpolated value; braces too, so no ``{{...}}`` survives from content."""
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    escaped = str(escape(value)).replace("{", "&#123;").replace("}", "&#125;")
    return Markup(escaped)  # noqa: S704 - escaped on the line above


def _text_finalize(value: Any) -> Any:
    """Plain text cannot be escaped; break up ``{{``/``}}`` so no placeholder is formed."""
    if value is None:
        return ""
    return _ADJACENT_BRACES.sub(r"\1 ", str(value))


def _environment(*, html: bool, translations: gettext.NullTranslations) -> Environment:
    environment = Environment(
        loader=PackageLoader(TEMPLATE_PACKAGE, TEMPLATE_FOLDER),
        # The text alternative is not HTML: escaping it would show "&amp;" to readers.
        autoescape=html,  # noqa: S701
        finalize=_html_finalize if html else _text_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.i18n"],
    )
    environment.policies["ext.i18n.trimmed"] = True
    environment.install_gettext_translations(translations, newstyle=True)  # type: ignore[attr-defined]
    # A value handed to ``_()`` as an argument is not finalized on its way: ``v()`` does it.
    environment.globals["v"] = environment.finalize
    return environment


@lru_cache(maxsize=16)
def _environments(language: str, catalog_dir: str | None) -> tuple[Environment, Environment]:
    """The HTML and text environments of an edition in ``language`` (made once each)."""
    translations = edition_translations(language, catalog_dir)
    return (
        _environment(html=True, translations=translations),
        _environment(html=False, translations=translations),
    )


def safe_link(url: Any) -> str | None:
    """``url`` when it is an absolute http(s) URL, else ``None`` (the text is shown unlinked)."""
    return url if isinstance(url, str) and is_http_url(url) else None


def _long_date(value: Any, language: str) -> str:
    try:
        day = Date.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return edition_date(day, language)


def template_context(issue: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """What both templates see: the issue's fields, links vetted, dates spelled out."""
    sections = issue["sections"]
    briefing = sections["briefing"]
    address = issue.get("postal_address") or ""
    topics = [
        {
            "slug": topic["slug"],
            "label": topic["label"],
            "summary": topic.get("summary") or "",
            "items": [
                {
                    "title": item["title"],
                    "url": safe_link(item.get("url")),
                    "source": item.get("source") or "",
                }
                for item in topic.get("items") or []
            ],
        }
        for topic in sections.get("topics") or []
    ]
    language = settings.language
    gettext_of = edition_translations(language, settings.catalog_dir).gettext
    kind = issue["kind"]
    return {
        "lang": language.replace("_", "-"),
        "site_name": settings.site_name,
        "site_url": safe_link(issue.get("site_url")),
        "site_label": issue.get("site_url") or settings.site_name,
        "subject": issue["subject"],
        "kind_label": gettext_of(_KIND_LABELS[kind]) if kind in _KIND_LABELS else kind.title(),
        "date_long": _long_date(issue["date"], language),
        "briefing": {
            "title": briefing["title"],
            "url": safe_link(briefing.get("url")),
            "date_long": _long_date(briefing.get("date", issue["date"]), language),
        },
        "topics": topics,
        "on_this_day": [
            {"year": entry["year"], "text": entry["text"], "url": safe_link(entry.get("url"))}
            for entry in sections.get("on_this_day") or []
        ],
        "puzzle_hint": sections.get("puzzle_hint") or "",
        "postal_lines": [line.strip() for line in address.splitlines() if line.strip()],
    }


def render_html(issue: dict[str, Any], settings: Settings) -> str:
    """The edition as email-safe HTML."""
    environment = _environments(settings.language, settings.catalog_dir)[0]
    return environment.get_template(HTML_TEMPLATE).render(template_context(issue, settings))


def render_text(issue: dict[str, Any], settings: Settings) -> str:
    """The plain-text alternative of :func:`render_html`, with the same placeholder."""
    environment = _environments(settings.language, settings.catalog_dir)[1]
    return environment.get_template(TEXT_TEMPLATE).render(template_context(issue, settings))


@hookimpl(trylast=True)
def newsletter_issue_renderers() -> list[IssueRenderer]:
    return [
        IssueRenderer(
            name="html",
            description="Built-in email-safe HTML (tables, inline styles, large type, dark-mode "
            "safe) with a plain-text alternative",
            render=render_html,
            render_text=render_text,
        )
    ]
