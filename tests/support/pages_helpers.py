"""Helpers for the reader-page tests: fetching a form with its CSRF token and cookie, posting
it back as a browser would, and reading what the page shows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode

from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL
from newsletter_connector.web.pages.csrf import COOKIE_NAME

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
ORIGIN = "https://news.example.test"
_TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]*)"')


@dataclass
class FormSession:
    """A form page as a browser holds it: its CSRF token and the cookie that goes with it."""

    token: str
    cookie: str
    page: Any

    def post(
        self,
        client: Any,
        path: str,
        fields: dict[str, Any] | list[tuple[str, str]],
        *,
        headers: dict[str, str] | None = None,
        with_token: bool = True,
        with_cookie: bool = True,
    ) -> Any:
        pairs = list(fields.items()) if isinstance(fields, dict) else list(fields)
        if with_token:
            pairs.append(("csrf_token", self.token))
        return client.simulate_post(
            path,
            body=urlencode(pairs, doseq=True),
            headers={**FORM, "Origin": ORIGIN, **(headers or {})},
            cookies={COOKIE_NAME: self.cookie} if with_cookie else None,
        )


def open_form(
    client: Any, path: str, cookie: str | None = None, headers: dict[str, str] | None = None
) -> FormSession:
    """GET a form page; its token and the CSRF cookie (the one sent back, or ``cookie``)."""
    page = client.simulate_get(
        path, cookies={COOKIE_NAME: cookie} if cookie else None, headers=headers
    )
    assert page.status_code == 200, page.text
    match = _TOKEN_RE.search(page.text)
    assert match, "form has no csrf_token field"
    return FormSession(token=match.group(1), cookie=page.cookies[COOKIE_NAME].value, page=page)


def path_of(url: str) -> str:
    """The app-relative path of a link in a contact record."""
    assert url.startswith(TEST_BASE_URL), url
    return url[len(TEST_BASE_URL) :]


def text_of(html: str) -> str:
    """The visible words of a page, whitespace collapsed."""
    html = re.sub(r"<(script|style|title)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def field_error(html: str, name: str) -> str | None:
    """The error message shown beside form field ``name`` (``None`` if there is none)."""
    match = re.search(rf'<p class="field-error" id="{name}-error">(.*?)</p>', html, re.S)
    return text_of(match.group(1)).removeprefix("Error: ") if match else None


def input_value(html: str, name: str) -> str | None:
    """The value an ``<input name=...>`` (or ``<textarea>``) is shown with."""
    parser = _Fields()
    parser.feed(html)
    return parser.values.get(name)


def checked(html: str, name: str) -> list[str]:
    """The values of the checked radios/checkboxes named ``name``."""
    parser = _Fields()
    parser.feed(html)
    return parser.checked.get(name, [])


def submitted_unchanged(html: str) -> list[tuple[str, str]]:
    """What a browser sends for the page's form when the reader touches nothing (every text
    input and textarea with its shown value, every ticked box; the CSRF token left out)."""
    parser = _Fields()
    parser.feed(html)
    pairs = [(name, value) for name, value in parser.values.items() if name != "csrf_token"]
    return pairs + [(name, value) for name, values in parser.checked.items() for value in values]


class _Fields(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self.checked: dict[str, list[str]] = {}
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name:
            if a.get("type") in ("radio", "checkbox"):
                if "checked" in a:
                    self.checked.setdefault(name, []).append(a.get("value") or "")
            else:
                self.values[name] = a.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.values[name] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.values[self._textarea] += data


class LabelAudit(HTMLParser):
    """Collects form controls and labels, to check that every field has a label."""

    def __init__(self) -> None:
        super().__init__()
        self.controls: list[dict[str, str | None]] = []
        self.label_for: set[str] = set()
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag in ("input", "textarea", "select") and a.get("type") != "hidden":
            self.controls.append(a)
        if tag == "label" and a.get("for"):
            self.label_for.add(str(a["for"]))
