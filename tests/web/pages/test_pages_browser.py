"""The reader pages in a real browser: headless Chromium (Debian's ``chromium`` package) driven
by Playwright against the app served by gunicorn in a subprocess.

Every flow runs with JavaScript switched off (the pages need none). Every page shown is audited
with axe-core (no serious or critical violation allowed) and saved as a screenshot under
``docs/images/pages/`` for ``docs/reader-pages.md``. axe needs JavaScript, so it audits a copy
of the page's HTML, with the same stylesheet, in a second, script-enabled tab.

These tests FAIL, never skip, when Chromium is missing: install it with
``apt-get install -y chromium``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.browser import SITE_NAME, VIEWPORT, served_site
from tests.support.pages_helpers import path_of
from tests.support.paths import ROOT
from tests.support.screens import write_screenshot

pytestmark = pytest.mark.system

SCREENSHOTS = ROOT / "docs" / "images" / "pages"


@pytest.fixture(scope="module")
def site(newsletter_database_url: str) -> Iterator[str]:
    """The app under gunicorn, with a postal address for the reader pages to show."""
    postal_address = "12 Main Street, Springfield, IL 62701"
    with served_site(newsletter_database_url, NEWSLETTER_POSTAL_ADDRESS=postal_address) as base:
        yield base


class Reader:
    """A reader's browser tab (no JavaScript) plus an auditing tab (with it)."""

    def __init__(self, browser: Any, site: str) -> None:
        self.site = site
        self.context = browser.new_context(java_script_enabled=False, viewport=VIEWPORT)
        self.context.set_default_timeout(20_000)
        self.page = self.context.new_page()
        self.audit_context = browser.new_context(viewport=VIEWPORT, bypass_csp=True)
        self.audit_context.set_default_timeout(20_000)
        self.audit_page = self.audit_context.new_page()

    def goto(self, path: str) -> Any:
        return self.page.goto(self.site + path)

    def check(self, name: str) -> None:
        """axe-core audit of the page as shown now, then its screenshot."""
        from axe_playwright_python.sync_playwright import Axe

        self.audit_page.set_content(self.page.content(), wait_until="load")
        # The copy has the real stylesheet (so contrast is measured on the real colours).
        size = self.audit_page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert size >= 18, f"{name}: base text {size}px"
        results = Axe().run(self.audit_page)
        serious = [
            f"{v['id']} ({v['impact']}): {v['help']} at "
            + ", ".join(str(node["target"]) for node in v["nodes"])
            for v in results.response["violations"]
            if v["impact"] in ("serious", "critical")
        ]
        assert not serious, f"{name}: " + "; ".join(serious)
        write_screenshot(self.page, SCREENSHOTS / f"{name}.png")

    def heading(self) -> str:
        return str(self.page.locator("h1").inner_text())

    def close(self) -> None:
        self.context.close()
        self.audit_context.close()


@pytest.fixture
def reader(browser: Any, site: str) -> Iterator[Reader]:
    tab = Reader(browser, site)
    try:
        yield tab
    finally:
        tab.close()


def test_signup(reader: Reader, newsletter_service: Any) -> None:
    reader.goto("/signup")
    assert reader.heading() == "Sign up for our newsletter"
    assert reader.page.title() == f"Sign up for our newsletter \N{EN DASH} {SITE_NAME}"
    reader.check("signup")

    page = reader.page
    page.get_by_label("Your email address").fill("margaret@example")
    page.get_by_label("Your ZIP code").fill("1234")
    page.get_by_label("Weekly").check()
    page.get_by_role("button", name="Sign up").click()
    error = page.locator("#email-error")
    assert "Enter your email address" in error.inner_text()
    assert page.get_by_label("Your email address").input_value() == "margaret@example"
    assert page.get_by_label("Your ZIP code").input_value() == "1234"
    assert page.get_by_label("Weekly").is_checked()
    reader.check("signup-error")

    page.get_by_label("Your email address").fill("Margaret@Example.org")
    page.get_by_label("Your ZIP code").fill("62701")
    page.get_by_role("button", name="Sign up").click()
    assert reader.heading() == "Check your email"
    reader.check("signup-done")
    record = newsletter_service.subscribers.get("margaret@example.org")
    assert (record.status, record.zip, record.prefs.briefings) == ("pending", "62701", "weekly")


def test_confirm_then_profile(reader: Reader, newsletter_service: Any) -> None:
    record = newsletter_service.subscribers.subscribe(
        {"email": "walter@example.org", "zip": "62701"}
    ).record
    links = newsletter_service.subscribers.contact(record)
    reader.goto(path_of(links["confirm_url"]))
    assert reader.heading() == "Thank you, your subscription is confirmed"
    assert newsletter_service.subscribers.get("walter@example.org").status == "confirmed"
    reader.check("confirm")

    page = reader.page
    page.get_by_role("link", name="Choose my topics").click()
    assert reader.heading() == "Your newsletter choices"
    reader.check("profile")

    page.get_by_label("First name").fill("Walter")
    page.get_by_label("Last name").fill("Jones")
    page.get_by_role("group", name="Puzzles").get_by_label("Weekly").check()
    page.get_by_role("group", name="Local news").get_by_label("Never").check()
    page.get_by_label("Health").check()
    page.get_by_label("Money").check()
    page.get_by_label("75 to 84").check()
    page.get_by_label("Yes, send me text messages").check()
    page.get_by_role("button", name="Save my choices").click()
    assert "enter your mobile phone number" in page.locator("#sms-error").inner_text()
    assert page.get_by_label("First name").input_value() == "Walter"
    reader.check("profile-error")

    page.get_by_label("Mobile phone number").fill("217 555 0100")
    page.get_by_role("button", name="Save my choices").click()
    assert "Your choices are saved" in page.locator(".notice--success").inner_text()
    reader.check("profile-saved")
    saved = newsletter_service.subscribers.get("walter@example.org")
    assert (saved.first_name, saved.last_name, saved.phone) == ("Walter", "Jones", "217 555 0100")
    assert (saved.prefs.puzzles, saved.prefs.local, saved.prefs.briefings) == (
        "weekly",
        "off",
        "daily",
    )
    assert saved.categories == ("health", "money")
    assert saved.age_range == "75_84" and saved.sms_enabled
    assert saved.profile_completed_at is not None

    reader.goto(path_of(links["confirm_url"]))
    assert reader.heading() == "Your subscription is already confirmed"
    reader.check("confirm-already")


def test_unsubscribe(reader: Reader, newsletter_service: Any) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "june@example.org"}).record
    link = newsletter_service.subscribers.contact(record)["unsubscribe_url"]
    reader.goto(path_of(link))
    assert reader.heading() == "Unsubscribe from the newsletter"
    reader.check("unsubscribe")
    assert newsletter_service.subscribers.get("june@example.org").status == "pending"

    reader.page.get_by_role("button", name="Unsubscribe").click()
    assert reader.heading() == "You are unsubscribed"
    reader.check("unsubscribe-done")
    assert newsletter_service.subscribers.get("june@example.org").status == "unsubscribed"


def test_contact(reader: Reader, newsletter_service: Any) -> None:
    reader.goto("/contact")
    assert reader.heading() == "Contact us"
    reader.check("contact")
    page = reader.page
    page.get_by_label("Your email address").fill("ruth@example.org")
    page.get_by_label("Your name").fill("Ruth")
    page.get_by_role("button", name="Send message").click()
    assert "Enter your message" in page.locator("#message-error").inner_text()
    assert page.get_by_label("Your name").input_value() == "Ruth"
    reader.check("contact-error")
    page.get_by_label("Your message").fill("When does the puzzle answer appear?")
    page.get_by_role("button", name="Send message").click()
    assert reader.heading() == "Thank you, your message has been sent"
    reader.check("contact-done")
    [message] = newsletter_service.messages.list_page().items
    assert (message.email, message.name) == ("ruth@example.org", "Ruth")


def test_unknown_link(reader: Reader) -> None:
    response = reader.goto("/profile/" + "x" * 32)
    assert response.status == 404
    assert "recognise this link" in reader.heading()
    reader.check("not-found")


def test_keyboard_focus_text_size_and_targets(browser: Any, site: str) -> None:
    """Measured in the browser: base text >= 18px, a visible focus ring on every control
    reached with Tab, and targets large enough to hit (buttons >= 44px tall)."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(site + "/signup")
        size = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert size >= 18
        seen = []
        for _ in range(8):
            page.keyboard.press("Tab")
            style = page.evaluate(
                "(() => { const e = document.activeElement, s = getComputedStyle(e);"
                " return [e.tagName + (e.id ? '#' + e.id : ''), s.outlineStyle,"
                " parseFloat(s.outlineWidth)]; })()"
            )
            seen.append(style[0])
            assert style[1] != "none" and style[2] >= 3, style
        assert seen[0] == "A" and "INPUT#email" in seen and "BUTTON" in seen, seen
        for control in page.locator("input:visible, button, textarea").all():
            box = control.bounding_box()
            assert box and box["width"] >= 24 and box["height"] >= 24, box
        button = page.get_by_role("button", name="Sign up").bounding_box()
        assert button and button["height"] >= 44
    finally:
        context.close()


def test_one_click_unsubscribe_over_http(site: str, newsletter_service: Any) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "oc@example.org"}).record
    link = newsletter_service.subscribers.contact(record)["unsubscribe_url"]
    response = httpx.post(
        site + path_of(link),
        content="List-Unsubscribe=One-Click",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert response.status_code == 200
    assert "set-cookie" not in response.headers and "location" not in response.headers
    assert newsletter_service.subscribers.get("oc@example.org").status == "unsubscribed"


def test_signup_with_the_keyboard_alone(reader: Reader, newsletter_service: Any) -> None:
    """Tab, type, arrow keys and Enter are enough (and no JavaScript)."""
    reader.goto("/signup")
    keyboard = reader.page.keyboard
    keyboard.press("Tab")  # the skip link
    keyboard.press("Enter")  # ...to the main content
    keyboard.press("Tab")
    keyboard.type("keys@example.org")
    keyboard.press("Tab")
    keyboard.type("10001")
    keyboard.press("Tab")  # the frequency radios: Daily is chosen
    keyboard.press("ArrowDown")  # Weekly
    keyboard.press("Tab")  # the Sign up button
    keyboard.press("Enter")
    reader.page.wait_for_url(re.compile(r"/signup/thanks(#main)?$"))
    assert reader.heading() == "Check your email"
    record = newsletter_service.subscribers.get("keys@example.org")
    assert (record.zip, record.prefs.briefings) == ("10001", "weekly")
