"""The built-in issue renderer ``html``: email-safe HTML plus a plain-text alternative.

Email-safe (presentation tables, inline styles, no images, scripts or web fonts), large type,
dark-mode safe; docs/issues.md says what each means. Content can never form a template
placeholder (``{{name}}``): ``{`` and ``}`` are escaped. Links only for absolute http(s) URLs.
The footer carries the literal ``{{unsubscribe_url}}`` the platform fills in per recipient.
"""

from __future__ import annotations

import re
from datetime import date as Date
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from ..descriptors import IssueRenderer
from ..hookspecs import hookimpl
from ..model.issue import is_http_url, long_date
from ..settings import Settings

TEMPLATE_PACKAGE = "newsletter_connector"
TEMPLATE_FOLDER = "plugins/issue_templates"
HTML_TEMPLATE = "issue.html"
TEXT_TEMPLATE = "issue.txt"

_KIND_LABELS = {
    "daily": "Daily briefing",
    "weekly": "Weekly roundup",
    "manual": "Special edition",
    "test": "Test issue",
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


def _environment(*, html: bool) -> Environment:
    return Environment(
        loader=PackageLoader(TEMPLATE_PACKAGE, TEMPLATE_FOLDER),
        # The text alternative is not HTML: escaping it would show "&amp;" to readers.
        autoescape=html,  # noqa: S701
        finalize=_html_finalize if html else _text_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


_HTML_ENV = _environment(html=True)
_TEXT_ENV = _environment(html=False)


def safe_link(url: Any) -> str | None:
    """``url`` when it is an absolute http(s) URL, else ``None`` (the text is shown unlinked)."""
    return url if isinstance(url, str) and is_http_url(url) else None


def _long_date(value: Any) -> str:
    try:
        return long_date(Date.fromisoformat(str(value)))
    except ValueError:
        return str(value)


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
    return {
        "site_name": settings.site_name,
        "site_url": safe_link(issue.get("site_url")),
        "site_label": issue.get("site_url") or settings.site_name,
        "subject": issue["subject"],
        "kind_label": _KIND_LABELS.get(issue["kind"], str(issue["kind"]).title()),
        "date_long": _long_date(issue["date"]),
        "briefing": {
            "title": briefing["title"],
            "url": safe_link(briefing.get("url")),
            "date_long": _long_date(briefing.get("date", issue["date"])),
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
    return _HTML_ENV.get_template(HTML_TEMPLATE).render(template_context(issue, settings))


def render_text(issue: dict[str, Any], settings: Settings) -> str:
    """The plain-text alternative of :func:`render_html`, with the same placeholder."""
    return _TEXT_ENV.get_template(TEXT_TEMPLATE).render(template_context(issue, settings))


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
