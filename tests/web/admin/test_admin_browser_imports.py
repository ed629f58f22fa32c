"""Admin → Import a list in a real browser (headless Chromium, JavaScript off, the app served by
gunicorn), with the keyboard alone: an owner uploads a Mailchimp export, says what one column
holds and that lines without consent are added as pending, lets the dry run (the sync runner's
work, done here by the test) say what importing would do, confirms the confirmation mails and
imports it. Each state of the pages is checked at 390 and 1280 px
(:func:`tests.support.screens.check_screens`): the choices form of an upload, the choices
shown again with what was wrong (a consent time that is no time), the dry run waiting for the
runner, the checked import (its counts, its refused lines and the mails
checkbox), the import under way, the import finished, and the Import page listing it. Every
control Tab reaches on the way shows its focus ring. With ``NEWSLETTER_WRITE_SCREENSHOTS=1`` it
saves ``docs/images/admin/import-choices.png`` and ``import-checked.png`` (down to the choices
form, which the first shows) for docs/admin.md.

A second walk meets the two warnings a file can raise: a listmonk export's ``status`` column
set to "Not imported" without the confirmation (the box to tick, marked, with why), then
confirmed, and the checked import naming the quote line 4 leaves open and the line it
swallowed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support import browser as browser_support
from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab, sign_in
from tests.support.screens import write_screenshot
from tests.web.admin import test_admin_browser as admin_browser

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

own_site = browser_support.own_site

#: A Mailchimp "subscribed" export cut down to a few columns, with a merge field of the
#: list's own (SIGNUP_SOURCE) that no name matches: a line with a source and a time is added
#: confirmed, one with neither as pending, one with only the time and one with a broken
#: address are refused.
MAILCHIMP = (
    '"Email Address","First Name","Last Name",SIGNUP_SOURCE,MEMBER_RATING,OPTIN_TIME,'
    "CONFIRM_TIME,LEID\n"
    'priya.raman@example.com,Priya,Raman,"Spring fair sign-up sheet",4,"2021-09-14 16:02:51",'
    '"2021-09-14 16:05:10",412336781\n'
    "jose.nunez@example.org,José,Núñez,,3,,,412337020\n"
    'lena.fischer@example.net,Lena,Fischer,,2,,"2020-11-03 10:15:00",412335118\n'
    "not-an-address,Cy,Do,,1,,,412337021\n"
    'marcus.webb@example.com,Marcus,Webb,"Website signup form",5,"2019-06-21 22:47:05",'
    '"2019-06-21 22:49:31",412330457\n'
).encode()

#: What has focus: whether it matches the selector, and whether its focus ring shows.
_FOCUS = """(selector) => {
  const element = document.activeElement;
  const style = getComputedStyle(element);
  return {
    matches: element.matches(selector),
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 3,
    what: element.tagName.toLowerCase() + (element.id ? '#' + element.id : '')
      + (element.name ? '[name=' + element.name + ']' : ''),
  };
}"""


def _tab_to(page: Any, selector: str, *, limit: int = 60) -> None:
    """Press Tab until the control ``selector`` names has focus; every stop on the way shows
    its focus ring. Fails naming the stops when it is not reached in ``limit`` presses."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        focus = page.evaluate(_FOCUS, selector)
        stops.append(focus["what"])
        assert focus["ring"], f"no focus ring on {focus['what']}"
        if focus["matches"]:
            return
    pytest.fail(f"Tab never reached {selector}: " + ", ".join(stops))


def _from_main(page: Any) -> None:
    """Follow the skip link with the keyboard: the next Tab goes into the page's content."""
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")


def _choose_with_space(page: Any, path: Path, *, attempts: int = 3) -> None:
    """Open the focused file input's chooser with Space and choose ``path``.

    Under load headless Chromium now and then drops the chooser a key press asks for, and
    no wait brings it back; the key is pressed again (focus unmoved) up to ``attempts`` times.
    """
    for attempt in range(attempts):
        assert page.evaluate(_FOCUS, "input#file")["matches"], "the file input lost focus"
        try:
            with page.expect_file_chooser(timeout=7_000) as chooser:
                page.keyboard.press("Space")
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            continue
        chooser.value.set_files(str(path))
        return


def _screenshot_above(page: Any, name: str, heading: str) -> None:
    """With ``NEWSLETTER_WRITE_SCREENSHOTS=1``, the page as ``_audit`` saves it for the docs,
    but only down to the heading ``heading`` (what follows it, another screenshot shows)."""
    if os.environ.get("NEWSLETTER_WRITE_SCREENSHOTS") != "1":
        return
    top = page.get_by_role("heading", name=heading).evaluate(
        "(element) => element.getBoundingClientRect().top + window.scrollY"
    )
    width = page.viewport_size["width"]
    clip = {"x": 0, "y": 0, "width": width, "height": top - 8}
    write_screenshot(page, admin_browser.SCREENSHOTS / f"{name}.png", clip=clip)


def _reload(page: Any) -> None:
    """Show the latest progress, as its link does."""
    page.get_by_role("link", name="Show the latest progress").click()


def test_import_a_mailchimp_export_with_the_keyboard_at_390_and_1280_px(
    browser: Any, own_site: tuple[str, Any], tmp_path: Path
) -> None:
    site, service = own_site
    service.admin_access.create_user("ada", PASSWORD)
    export = tmp_path / "subscribed_members_export.csv"
    export.write_bytes(MAILCHIMP)
    with scriptless_tab(browser) as page:
        sign_in(page, site, path="/admin/login")
        page.get_by_role("navigation").get_by_role("link", name="Subscribers").click()
        page.get_by_role("link", name="import a list").click()
        assert page.locator("h1").inner_text() == "Import a list"

        # The upload form: the file chooser opens from the keyboard, then Upload.
        _from_main(page)
        _tab_to(page, "input#file")
        _choose_with_space(page, export)
        _tab_to(page, "form[action$='/admin/imports/upload'] button")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/admin/imports/\d+$"))
        job_id = int(page.url.rsplit("/", 1)[1])
        assert page.locator("h1").inner_text() == "Import: subscribed_members_export.csv"
        assert service.import_jobs.get(job_id).phase == "uploaded"
        columns = page.get_by_role("group", name="What each column holds")
        assert columns.get_by_label("Column “Email Address”").input_value() == "email"
        assert columns.get_by_label("Column “SIGNUP_SOURCE”").input_value() == ""
        assert columns.get_by_label("Column “MEMBER_RATING”").input_value() == ""
        admin_browser._audit(browser, page, "import-choices")

        # The choices form: SIGNUP_SOURCE holds where they agreed, lines without consent are
        # added as pending, and a time that is no time is refused, the choices kept.
        _from_main(page)
        _tab_to(page, "select[name=column_3]")
        page.keyboard.type("Where they")
        assert columns.get_by_label("Column “SIGNUP_SOURCE”").input_value() == "consent_source"
        _tab_to(page, "input#consent_collected_at")
        page.keyboard.type("last spring")
        _tab_to(page, "input[name=without_consent]")
        page.keyboard.press("ArrowDown")
        pending = page.get_by_role("group", name="Lines without consent").get_by_label(
            "Add them as pending", exact=False
        )
        assert pending.is_checked()
        _tab_to(page, "form[action$='/admin/imports/choose'] button")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/admin/imports/choose$"))
        when = page.get_by_label("When they agreed, for lines without their own")
        assert when.get_attribute("aria-invalid") == "true"
        assert "ISO-8601" in page.locator("#consent-error").inner_text()
        assert columns.get_by_label("Column “SIGNUP_SOURCE”").input_value() == "consent_source"
        assert pending.is_checked()
        assert service.import_jobs.get(job_id).phase == "uploaded"
        admin_browser._audit(browser, page, "import-choices-refused", screenshot=False)

        # The time taken out again (the export's own times are used); then the dry run.
        _from_main(page)
        _tab_to(page, "input#consent_collected_at")
        page.keyboard.press("Control+A")
        page.keyboard.press("Backspace")
        _tab_to(page, "form[action$='/admin/imports/choose'] button")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/admin/imports/{job_id}$"))
        assert "Waiting for the sync runner" in page.locator("main").inner_text()
        admin_browser._audit(browser, page, "import-checking", screenshot=False)

        # The sync runner's dry run; the page says what importing would do.
        service.import_jobs.work()
        _reload(page)
        job = service.import_jobs.get(job_id)
        assert job.phase == "checked"
        assert job.counts == {"added": 2, "added_pending": 1, "refused": 2}
        main = page.locator("main").inner_text()
        assert "Checked: this is what importing it would do." in main
        assert "{" not in main  # words and tables, never raw JSON
        refused = page.get_by_role("region", name=re.compile("^All 2 refused lines;"))
        assert refused.locator("tbody tr").count() == 2
        mails = page.get_by_label(
            "The platform will mail the 1 pending reader a confirmation (1 mail)", exact=False
        )
        assert not mails.is_checked()
        admin_browser._audit(browser, page, "import-checked", screenshot=False)
        _screenshot_above(page, "import-checked", "Or change how it is read")

        # The start form: the mails are confirmed, then Import.
        _from_main(page)
        _tab_to(page, "input[name=confirm_mails]")
        page.keyboard.press("Space")
        assert mails.is_checked()
        _tab_to(page, "form[action$='/admin/imports/start'] button")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/admin/imports/{job_id}$"))
        assert service.import_jobs.get(job_id).phase == "importing"
        assert page.get_by_role("button", name="Stop it").count() == 1
        admin_browser._audit(browser, page, "import-importing", screenshot=False)

        # The import, done; its file is deleted.
        service.import_jobs.work()
        _reload(page)
        main = page.locator("main").inner_text()
        assert "Imported at" in main and "What the dry run said" in main
        assert page.get_by_role("button").filter(has_text="Stop it").count() == 0
        assert service.import_jobs.part(job_id, 0) is None
        with service.storage.transaction(write=False) as uow:
            assert uow.subscribers.count(status="confirmed") == 2
            assert uow.subscribers.count(status="pending") == 1
        admin_browser._audit(browser, page, "import-done", screenshot=False)

        # The Import page lists it.
        page.get_by_role("link", name="All imports").click()
        assert page.locator("h1").inner_text() == "Import a list"
        row = page.get_by_role("row").filter(has_text="subscribed_members_export.csv")
        assert "Imported." in row.inner_text()
        admin_browser._audit(browser, page, "imports", screenshot=False)
        actions = [entry.action for entry in service.admin_audit.latest(4)]
        assert actions == [
            "subscribers.import",
            "subscribers.import_check",
            "subscribers.import_upload",
            "login",
        ]


#: A listmonk export whose ``status`` column marks a blocklisted reader, and whose line 4
#: opens a quote it never closes.
LISTMONK_OPEN_QUOTE = (
    b"uuid,email,name,status\n"
    b"6f1c,ann@example.org,Ann Lee,enabled\n"
    b"7a2d,bob@example.org,Bob Ray,blocklisted\n"
    b'8b3e,cy@example.org,"Cy Do,enabled\n'
    b"9c4f,dee@example.org,Dee Park,enabled\n"
)


def test_an_opt_out_column_left_out_and_an_open_quote_with_the_keyboard_at_390_and_1280_px(
    browser: Any, own_site: tuple[str, Any], tmp_path: Path
) -> None:
    site, service = own_site
    service.admin_access.create_user("bea", PASSWORD)  # the module's site has the first's ada
    export = tmp_path / "subscribers.csv"
    export.write_bytes(LISTMONK_OPEN_QUOTE)
    with scriptless_tab(browser) as page:
        sign_in(page, site, path="/admin/login", username="bea")
        page.goto(site + "/admin/imports")
        page.get_by_label("The file").set_input_files(str(export))
        page.get_by_role("button", name="Upload").click()
        page.wait_for_url(re.compile(r"/admin/imports/\d+$"))
        job_id = int(page.url.rsplit("/", 1)[1])
        main = page.locator("main").inner_text()
        assert "If it is set to “Not imported”: “status” marks the readers who unsubscribed" in main

        # "status" set to "Not imported" with the keyboard, and the form sent unconfirmed: the
        # page says what that would do beside the box to tick, nothing changed.
        _from_main(page)
        _tab_to(page, "select[name=column_3]")
        page.keyboard.type("Not imported")
        columns = page.get_by_role("group", name="What each column holds")
        assert columns.get_by_label("Column “status”").input_value() == ""
        _tab_to(page, "input#consent_source")
        page.keyboard.type("Spring fair")
        _tab_to(page, "input#consent_collected_at")
        page.keyboard.type("2024-03-05T14:22:10Z")
        _tab_to(page, "form[action$='/admin/imports/choose'] button")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/admin/imports/choose$"))
        confirm = page.locator("input[name=confirm_opt_outs]")
        assert confirm.get_attribute("aria-invalid") == "true"
        assert "opted out" in page.locator("#confirm_opt_outs-error").inner_text()
        assert service.import_jobs.get(job_id).phase == "uploaded"
        admin_browser._audit(browser, page, "import-opt-outs-unconfirmed", screenshot=False)

        # Confirmed with Space, then the dry run: line 4's quote and the lines it swallowed are
        # named in the refused lines' table.
        _from_main(page)
        _tab_to(page, "input[name=confirm_opt_outs]")
        page.keyboard.press("Space")
        assert confirm.is_checked()
        _tab_to(page, "form[action$='/admin/imports/choose'] button")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"/admin/imports/{job_id}$"))
        service.import_jobs.work()
        _reload(page)
        assert service.import_jobs.get(job_id).phase == "checked"
        refused = page.get_by_role("region", name=re.compile("^All 2 refused lines;"))
        assert "A quote opened on line 4 never closes, so lines 4 to 5" in refused.inner_text()
        assert "{" not in page.locator("main").inner_text()
        admin_browser._audit(browser, page, "import-checked-open-quote", screenshot=False)
