"""Every admin page on a phone and on a desktop: each page an owner reaches by GET (every
address of the admin area, with the query a link to it carries; an act's address answers its
"Not a page" 405, a missing record its 404, both in the admin layout), the editor's "Not open
to editors" page and the login page, checked at 390 and 1280 px in headless Chromium: axe-core
finds no violation of any impact, the page never scrolls sideways, every touch target is at
least 44 px and the text is the reader pages' size (:mod:`tests.support.screens`).

Layout does not depend on the database, so the pages are served from a SQLite file of the
module's own, filled with a record of every kind a page lists (long addresses included), and
the module runs once per CI run, not once per database. With ``NEWSLETTER_WRITE_SCREENSHOTS=1``
it saves ``docs/images/admin/phone-*.png``, ``subscribers-all.png`` and ``bulk-act.png`` for
docs/admin.md. FAILS, never skips, when
Chromium is missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from newsletter_connector.descriptors import EDITOR
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.subscriber_export import CSV_COLUMNS
from newsletter_connector.storage.subscriber_query import SubscriberFilter
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from newsletter_connector.web.admin import paths
from tests.support.admin import PASSWORD
from tests.support.browser import private_service, scriptless_tab, served_site, sign_in
from tests.support.screens import check_screens, write_screenshot
from tests.web.admin.test_admin_browser import SCREENSHOTS
from tests.web.admin.test_admin_browser import _audit as screen_and_shot
from tests.web.admin.test_admin_browser_twins import _failed_batches

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

LONG_ADDRESS = "margaret.anne.featherstonehaugh-cholmondeley@retirement-village.example.org"
#: Addresses that are not pages: the stylesheet, and an issue's rendering (the email itself,
#: shown inside the Issues page's sandboxed frame).
NOT_PAGES = (paths.STYLESHEET,)
#: The pages reached only with a query, as the links to them carry it.
WITH_QUERY = (
    f"{paths.SUBSCRIBERS}?status=confirmed&zip=0",
    f"{paths.SUBSCRIBERS}?zip=x",
    f"{paths.SUBSCRIBER}?email={LONG_ADDRESS}",
    f"{paths.SUBSCRIBER_ERASE}?email={LONG_ADDRESS}",
    f"{paths.MESSAGES}?show=unhandled",
    f"{paths.ADMIN_USER_DELETE}?username=eve",
    "/admin/settings/api-keys/1/revoke",
    "/admin?days=90",
    f"{paths.SUBSCRIBER_JOBS}/1",
)
#: Pages whose phone screenshot docs/admin.md shows.
PHONE_SHOTS = {paths.HOME: "phone-dashboard", paths.SUBSCRIBERS: "phone-subscribers"}


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, NewsletterService]]:
    """A SQLite file holding an owner ``ada``, an editor ``eve`` and a record of every kind
    the admin pages list; its URL and a service on it."""
    with private_service(tmp_path_factory.mktemp("screens")) as (url, service):
        _fill(service)
        yield url, service


def _fill(service: NewsletterService) -> None:
    service.admin_access.create_user("ada", PASSWORD)
    service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
    with service.storage.transaction() as uow:
        uow.subscribers.add(
            make_subscriber_data(LONG_ADDRESS, status="confirmed", phone="+1 555 010 9999")
        )
        uow.subscribers.add(make_subscriber_data("mo@example.org", status="pending"))
    service.messages.record(LONG_ADDRESS, "Margaret", "Please send the puzzles weekly.\n" * 3)
    service.issues.run_digest("manual", content=sample_issue_content())
    service.admin.create_api_key("site backend with a rather long label for its key")
    _failed_batches(service, 2)
    service.subscriber_jobs.start(
        "bounce",
        SubscriberFilter(status="pending"),
        filter_text="status=pending&zip=0",
        requested_by="ada",
        expected=1,
        expected_exact=False,
    )


@pytest.fixture(scope="module")
def site(filled: tuple[str, NewsletterService]) -> Iterator[str]:
    with served_site(filled[0]) as base:
        yield base


def _pages() -> list[str]:
    """Every admin address an owner may GET, then those reached with a query."""
    addresses = sorted(
        value
        for name, value in vars(paths).items()
        if name.isupper() and isinstance(value, str) and value not in NOT_PAGES
    )
    return [*addresses, *WITH_QUERY]


def test_every_admin_page_at_390_and_1280_px(browser: Any, site: str) -> None:
    checked = []
    with scriptless_tab(browser) as page:
        page.goto(site + paths.LOGIN)
        check_screens(browser, page, "login")
        sign_in(page, site)
        for address in _pages():
            answer = page.goto(site + address)
            assert answer is not None, address
            assert answer.status < 500, (address, answer.status)
            if "text/html" not in (answer.headers.get("content-type") or ""):
                continue  # a file (the CSV export)
            assert page.locator(".admin-header").count() == 1, address  # errors too
            check_screens(browser, page, f"{address} ({answer.status})")
            checked.append(address)
            shot = PHONE_SHOTS.get(address)
            if shot and os.environ.get("NEWSLETTER_WRITE_SCREENSHOTS") == "1":
                _phone_screenshot(browser, page, SCREENSHOTS / f"{shot}.png")
    assert {paths.HOME, paths.SUBSCRIBERS, paths.API_KEYS, *WITH_QUERY} <= set(checked)


def test_an_act_on_all_matching_at_390_and_1280_px(browser: Any, site: str) -> None:
    with scriptless_tab(browser) as page:
        sign_in(page, site)
        page.goto(f"{site}{paths.SUBSCRIBERS}?status=pending")
        page.get_by_role("button", name="Unsubscribe all…").click()
        assert page.locator("h1").inner_text() == "Unsubscribe 1 subscriber?"
        screen_and_shot(browser, page, "subscribers-all")
        page.get_by_role("button", name="Unsubscribe them").click()
        assert page.locator("h1").inner_text() == "Unsubscribing 1 subscriber"
        screen_and_shot(browser, page, "bulk-act")


@pytest.mark.parametrize("width", [390, 1280])
def test_the_csv_column_choices_open_with_each_box_beside_its_words(
    browser: Any, site: str, width: int
) -> None:
    """Opened with the keyboard, each column's tick box keeps its size and sits just before its
    words (a grid's full-width inputs must not stretch it away from them)."""
    with scriptless_tab(browser) as page:
        page.set_viewport_size({"width": width, "height": 900})
        sign_in(page, site)
        page.goto(site + paths.SUBSCRIBERS)
        page.get_by_text("Columns of the CSV file").first.focus()
        page.keyboard.press("Enter")
        choices = page.locator("details[open] label:has(> input[name='columns'])")
        assert choices.count() == len(CSV_COLUMNS)
        for n in range(choices.count()):
            label = choices.nth(n)
            box = label.locator("input").bounding_box()
            whole = label.bounding_box()
            assert box and whole, n
            assert box["width"] == pytest.approx(box["height"], abs=1), label.inner_text()
            assert box["x"] - whole["x"] < 2, label.inner_text()  # the box leads its words
        check_screens(browser, page, f"{paths.SUBSCRIBERS} with the CSV columns open")


def test_the_editors_refusal_page_at_390_and_1280_px(browser: Any, site: str) -> None:
    with scriptless_tab(browser) as page:
        sign_in(page, site, username="eve")
        answer = page.goto(site + paths.API_KEYS)
        assert answer is not None and answer.status == 403
        check_screens(browser, page, "not open to editors")


def _phone_screenshot(browser: Any, page: Any, path: Path) -> None:
    """``page`` as a 390 px wide phone shows it, whole."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    try:
        context.add_cookies(page.context.cookies())
        phone = context.new_page()
        phone.goto(page.url)
        write_screenshot(phone, path)
    finally:
        context.close()
