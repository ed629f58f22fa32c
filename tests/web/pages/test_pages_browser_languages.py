"""The reader pages in English and in Spanish, in a real browser at 390 and 1280 px: every page a
reader meets, axe-core finding no violation of any impact, no sideways scrolling, ``lang`` set
to the page's language. The Spanish pages are saved as screenshots for docs/reader-pages.md
(``docs/images/pages/es-*.png``, at 1280 px). Pages, not a database, are checked: each language
is served from a SQLite file of its own, once per CI run (``database_independent``).

These tests FAIL, never skip, when Chromium is missing: ``apt-get install -y chromium``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import private_service, served_site
from tests.support.pages_helpers import path_of
from tests.support.paths import ROOT
from tests.support.screens import write_screenshot

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

SCREENSHOTS = ROOT / "docs" / "images" / "pages"
WIDTHS = (390, 1280)
POSTAL_ADDRESS = "12 Main Street, Springfield, IL 62701"


@pytest.fixture(scope="module", params=["en", "es"])
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, Any]]:
    language = request.param
    with (
        private_service(tmp_path_factory.mktemp(f"site-{language}")) as (url, service),
        served_site(
            url, NEWSLETTER_POSTAL_ADDRESS=POSTAL_ADDRESS, NEWSLETTER_LANGUAGE=language
        ) as base,
    ):
        yield base, language, service


def _audit(audit: Any, page: Any, name: str, width: int, language: str) -> None:
    """axe-core on a copy of the page as shown (in ``audit``, a tab with scripts on and the
    same stylesheet); every impact."""
    from axe_playwright_python.sync_playwright import Axe

    assert page.locator("html").get_attribute("lang") == language, name
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{name} at {width}px scrolls sideways ({wide}px)"
    audit.set_content(page.content(), wait_until="load")
    violations = Axe().run(audit).response["violations"]
    found = [f"{v['id']} ({v['impact']}): {v['help']}" for v in violations]
    assert not found, f"{language} {name} at {width}px: " + "; ".join(found)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_reader_page_in_both_languages_at_both_widths(
    browser: Any, site: tuple[str, str, Any], width: int
) -> None:
    base, language, newsletter_service = site
    viewport = {"width": width, "height": 900}
    context = browser.new_context(java_script_enabled=False, viewport=viewport)
    context.set_default_timeout(30_000)
    page = context.new_page()
    audit_context = browser.new_context(viewport=viewport, bypass_csp=True)
    audit_context.set_default_timeout(30_000)
    audit = audit_context.new_page()

    def check(name: str) -> None:
        _audit(audit, page, name, width, language)
        if language == "es" and width == 1280:
            write_screenshot(page, SCREENSHOTS / f"es-{name}.png")

    try:
        email = f"lector{width}-{language}@example.org"
        page.goto(base + "/signup")
        check("signup")
        page.locator("#email").fill("no-es-una-direccion")
        page.locator("button[type=submit]").click()
        check("signup-error")
        page.locator("#email").fill(email)
        page.locator("#zip").fill("62701")
        page.locator("button[type=submit]").click()
        check("signup-done")
        record = newsletter_service.subscribers.get(email)
        links = newsletter_service.subscribers.contact(record)
        page.goto(base + path_of(links["confirm_url"]))
        check("confirm")
        page.goto(base + path_of(links["profile_url"]))
        check("profile")
        page.locator("#sms").check()
        page.locator("button[type=submit]").last.click()
        check("profile-error")
        page.goto(base + path_of(links["unsubscribe_url"]))
        check("unsubscribe")
        page.locator("button[type=submit]").click()
        check("unsubscribe-done")
        page.goto(base + "/contact")
        check("contact")
        page.locator("button[type=submit]").click()
        check("contact-error")
        page.goto(base + "/profile/" + "x" * 32)
        check("not-found")
    finally:
        context.close()
        audit_context.close()
