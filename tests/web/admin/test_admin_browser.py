"""The admin area in a real browser: headless Chromium (Debian's ``chromium`` package) driven
by Playwright, JavaScript off, against the app served by gunicorn in a subprocess.

Signs in, issues an API key (shown once: absent after a reload, going back, or on the list),
revokes it, and checks the sign-in, home and API-keys pages at 390 and 1280 px (axe-core finds
no violation of any impact, no sideways scrolling, 44 px touch targets). With
``NEWSLETTER_WRITE_SCREENSHOTS=1`` it saves ``docs/images/admin/login.png`` and ``api-keys.png``
for docs/admin.md. FAILS, never skips, when Chromium is missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab, served_site
from tests.support.paths import ROOT
from tests.support.screens import check_screens, write_screenshot

pytestmark = pytest.mark.system

SCREENSHOTS = ROOT / "docs" / "images" / "admin"


@pytest.fixture(scope="module")
def site(newsletter_database_url: str) -> Iterator[str]:
    with served_site(newsletter_database_url) as base:
        yield base


def _audit(browser: Any, page: Any, name: str, *, screenshot: bool = True) -> None:
    """The page checked at a phone's and a desktop's width (:func:`check_screens`), then its
    screenshot for the docs when ``screenshot`` and the variable ask for it."""
    check_screens(browser, page, name)
    if screenshot and os.environ.get("NEWSLETTER_WRITE_SCREENSHOTS") == "1":
        write_screenshot(page, SCREENSHOTS / f"{name}.png")


def test_sign_in_issue_a_key_once_and_revoke_it(
    browser: Any, site: str, newsletter_service: Any
) -> None:
    newsletter_service.admin_access.create_user("ada", PASSWORD)
    with scriptless_tab(browser) as page:
        page.goto(site + "/admin")
        assert page.url == site + "/admin/login"
        assert page.locator("h1").inner_text() == "Sign in"
        _audit(browser, page, "login")

        page.get_by_label("Username").fill("ada")
        page.get_by_label("Password").fill("wrong password!")
        page.get_by_role("button", name="Sign in").click()
        assert page.locator(".error").inner_text() == "wrong username or password"
        _audit(browser, page, "login-error", screenshot=False)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        assert page.locator("h1").inner_text() == "Dashboard"
        _audit(browser, page, "home", screenshot=False)

        page.get_by_role("navigation").get_by_role("link", name="API keys").click()
        assert page.locator("h1").inner_text() == "API keys"
        page.get_by_label("Label").fill("site backend")
        page.get_by_role("button", name="Create key").click()
        key = page.get_by_label("The new key").input_value()
        assert key.startswith("nlk_")
        assert "it will not be shown again" in page.content()
        _audit(browser, page, "api-key-shown", screenshot=False)
        assert newsletter_service.admin.authenticate_api_key(key).label == "site backend"

        page.get_by_role("link", name="Back to API keys").click()
        assert "site backend" in page.content() and key not in page.content()
        _audit(browser, page, "api-keys")
        page.go_back()
        assert key not in page.content()
        page.reload()
        assert key not in page.content()

        page.goto(site + "/admin/settings/api-keys")
        page.get_by_role("link", name="Revoke site backend").click()
        assert page.locator("h1").inner_text() == "Revoke the key “site backend”?"
        _audit(browser, page, "api-key-revoke", screenshot=False)
        page.get_by_role("button", name="Revoke key").click()
        assert "revoked: it no longer works" in page.locator(".flash").inner_text()
        assert not newsletter_service.admin.list_api_keys()[0].active
        actions = [act.action for act in newsletter_service.admin_audit.latest(10)]
        assert actions == ["api_key.revoke", "api_key.create", "login", "login.failed"]
        page.goto(site + "/admin/audit?before=x")  # a 400 page of the admin area
        assert page.locator("h1").inner_text() == "No such page of the audit log"
        _audit(browser, page, "bad-request", screenshot=False)
