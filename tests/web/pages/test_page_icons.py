"""Reader and admin pages name their icon in the page (an empty ``data:`` icon), so browsers never
ask the site root for ``/favicon.ico``, which a mounted app does not own; everything else a page's
head names answers 200 from the app."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import jinja2

from newsletter_connector.web.pages.rendering import SECURITY_HEADERS
from tests.support.admin import get_page
from tests.support.docblocks import docblock
from tests.support.pages_helpers import path_of
from tests.support.paths import ROOT

ICON = "data:,"
TEMPLATES = ROOT / "src" / "newsletter_connector" / "web"


class _HeadLinks(HTMLParser):
    """The ``<link>`` elements of a page: ``(rel, href)``."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "link":
            found = dict(attrs)
            self.links.append((found.get("rel") or "", found.get("href") or ""))


def head_links(html: str) -> list[tuple[str, str]]:
    parser = _HeadLinks()
    parser.feed(html)
    return parser.links


def assert_icon_and_links_answer(client: Any, page: Any, **options: Any) -> None:
    assert page.status_code in (200, 404), page.text
    links = head_links(page.text)
    assert [href for rel, href in links if "icon" in rel.split()] == [ICON]
    for rel, href in links:
        if href != ICON:
            fetched = client.simulate_get(path_of(href), **options)
            assert fetched.status_code == 200, (rel, href)
    policy = page.headers["content-security-policy"]
    image_sources = next(d for d in policy.split(";") if d.strip().startswith("img-src")).split()
    assert "data:" in image_sources  # the policy lets the browser use the empty icon


def test_every_reader_page_names_an_empty_icon(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "icon@example.org"}).record
    contact = dict(newsletter_service.subscribers.contact(record))
    for path in (
        "/signup",
        "/contact",
        path_of(contact["profile_url"]),
        path_of(contact["unsubscribe_url"]),
        "/profile/" + "p" * 40,  # the not-found page
    ):
        assert_icon_and_links_answer(newsletter_client, newsletter_client.simulate_get(path))


def test_admin_pages_name_an_empty_icon(client: Any, session: str) -> None:
    from newsletter_connector.web.admin.gate import COOKIE_NAME

    assert_icon_and_links_answer(client, client.simulate_get("/admin/login"))
    for path in ("/admin", "/admin/settings/api-keys"):
        assert_icon_and_links_answer(
            client, get_page(client, path, session), cookies={COOKIE_NAME: session}
        )


def test_the_pages_policy_allows_data_images_only_besides_its_own() -> None:
    policy = SECURITY_HEADERS["Content-Security-Policy"]
    assert "img-src 'self' data:;" in policy


def test_the_documented_base_html_names_the_icon_too() -> None:
    template = jinja2.Environment(autoescape=True).from_string(docblock("reader-pages-base-html"))
    html = template.render(site_name="News", stylesheet_url="https://example.org/n/reader.css")
    assert ("icon", ICON) in head_links(html)
