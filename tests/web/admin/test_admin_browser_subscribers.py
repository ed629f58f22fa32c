"""Admin → Subscribers, Contact messages and Issues in a real browser (headless Chromium,
JavaScript off, the app served by gunicorn): sign in, find a subscriber by the beginning of
the address, see a refused edit shown again, edit its name, ZIP and a cadence, erase it through
the confirm step and find it gone; open the messages and the issues. Every page is checked at
390 and 1280 px (:func:`tests.support.screens.check_screens`). With
``NEWSLETTER_WRITE_SCREENSHOTS=1`` it saves ``docs/images/admin/subscribers.png``,
``subscriber.png``, ``messages.png`` and ``issues.png`` for docs/admin.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.errors import NotFound
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support import browser as browser_support
from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab, sign_in
from tests.web.admin import test_admin_browser as admin_browser

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

own_site = browser_support.own_site


def _seed(service: Any) -> None:
    with service.storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data("anna@example.org", status="confirmed"))
        uow.subscribers.add(make_subscriber_data("annette@example.org", status="pending"))
        uow.subscribers.add(make_subscriber_data("ben@example.org", status="confirmed"))
    service.messages.record("anna@example.org", "Anna", "Please remove me.")
    service.messages.record("carl@example.org", "Carl", "Hello!\nThe puzzle on page 2\n  is great.")
    service.issues.run_digest("manual", content=sample_issue_content())


def test_find_and_erase_a_subscriber_then_read_messages_and_issues(
    browser: Any, own_site: tuple[str, Any]
) -> None:
    site, service = own_site
    service.admin_access.create_user("ada", PASSWORD)
    _seed(service)
    with scriptless_tab(browser) as page:
        sign_in(page, site, path="/admin/login")

        page.get_by_role("navigation").get_by_role("link", name="Subscribers").click()
        rows = page.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert rows == ["ben@example.org", "annette@example.org", "anna@example.org"]
        page.get_by_label("Address begins with").fill("Ann")
        page.get_by_label("Order").select_option(label="Address, A to Z")
        page.get_by_role("button", name="Show subscribers").click()
        rows = page.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert rows == ["anna@example.org", "annette@example.org"]
        assert page.locator(".count").inner_text() == "2 subscribers match."
        admin_browser._audit(browser, page, "subscribers")

        page.get_by_role("link", name="anna@example.org").click()
        assert page.locator("h1").inner_text() == "anna@example.org"
        assert page.locator(".status-line").inner_text() == "Confirmed: gets the newsletter."
        page.get_by_label("ZIP code").fill("12")
        page.get_by_role("button", name="Save details").click()
        assert page.get_by_label("ZIP code").get_attribute("aria-invalid") == "true"
        admin_browser._audit(browser, page, "subscriber-edit-refused", screenshot=False)
        page.get_by_label("ZIP code").fill("62701")
        page.get_by_label("First name").fill("Anna")
        page.get_by_role("group", name="How often each part is sent").get_by_label(
            "Puzzles"
        ).select_option("weekly")
        page.get_by_role("button", name="Save details").click()
        assert page.locator(".flash").inner_text() == "Details saved."
        record = service.subscribers.get("anna@example.org")
        assert (record.first_name, record.zip, record.prefs.puzzles) == ("Anna", "62701", "weekly")
        assert "subscriber.edit" in page.locator("main").inner_text()
        admin_browser._audit(browser, page, "subscriber")

        page.get_by_role("link", name="Erase everything stored about this address…").click()
        assert page.locator("h1").inner_text() == (
            "Erase everything stored about anna@example.org?"
        )
        admin_browser._audit(browser, page, "subscriber-erase", screenshot=False)
        page.get_by_role("button", name="Erase").click()
        assert (
            page.locator(".flash")
            .inner_text()
            .startswith("Subscriber erased (was confirmed); 1 contact messages erased")
        )
        page.get_by_label("Address begins with").fill("anna@")
        page.get_by_role("button", name="Show subscribers").click()
        assert "No subscriber matches." in page.locator("main").inner_text()
        with pytest.raises(NotFound):
            service.subscribers.get("anna@example.org")

        page.get_by_role("navigation").get_by_role("link", name="Contact messages").click()
        assert page.locator("article h2").all_inner_texts() == ["Carl <carl@example.org>"]
        reply = page.get_by_role("link", name="Reply to carl@example.org")
        assert reply.get_attribute("href").startswith(
            "mailto:carl@example.org?subject=Re%3A%20your%20message&body="
        )
        page.get_by_role("button", name="Mark handled the message from carl@example.org").click()
        assert "is marked handled" in page.locator(".flash").inner_text()
        assert "Handled by ada on" in page.locator("article .meta").inner_text()
        [message] = service.messages.list_page().items
        assert service.messages.handling_of([message])[message.id].handled_by == "ada"
        admin_browser._audit(browser, page, "messages")
        page.get_by_role("link", name="Not handled yet").click()
        assert "Every message is handled." in page.locator("main").inner_text()
        admin_browser._audit(browser, page, "messages-unhandled", screenshot=False)

        page.get_by_role("navigation").get_by_role("link", name="Issues").click()
        frame = page.frame_locator("iframe")
        assert frame.locator("body").inner_text() != ""
        admin_browser._audit(browser, page, "issues")
        actions = [act.action for act in service.admin_audit.latest(5)]
        assert actions == ["message.handled", "subscriber.erase", "subscriber.edit", "login"]

        page.get_by_role("link", name="Write an issue").click()
        page.get_by_label("Subject").fill("Spring at the clinic")
        briefing = page.get_by_role("group", name="Briefing: the day's lead story")
        briefing.get_by_label("Title").fill("Clinics open late")
        briefing.get_by_label("Link").fill("https://news.example/clinics")
        briefing.get_by_label("Date of the story").fill("2026-03-01")
        entry = page.get_by_role("group", name="On this day, entry 1")
        entry.get_by_label("Year").fill("1969")
        entry.get_by_label("What happened").fill("A walk on the moon")
        entry.get_by_label("Link").fill("https://news.example/moon")
        page.get_by_label("Name of the topic").fill("Health")
        story = page.get_by_role("group", name="Topic 1, story 1")
        story.get_by_label("Story title").fill("Flu shots are free")
        # A link without its scheme and a year that is no number: both are listed at the top
        # and said beside their fields, in words, on one Preview.
        story.get_by_label("Link").fill("news.example/flu")
        entry.get_by_label("Year").fill("nineteen")
        page.get_by_role("button", name="Preview").click()
        problems = page.get_by_role("alert")
        assert "2 things need changing" in problems.inner_text()
        assert "Topic 1, story 1: the link must start with https:// or http://" in (
            problems.inner_text()
        )
        assert story.get_by_label("Link").get_attribute("aria-invalid") == "true"
        assert "sections." not in page.locator("main").inner_text()
        admin_browser._audit(browser, page, "issue-compose-problems", screenshot=False)
        story = page.get_by_role("group", name="Topic 1, story 1")
        entry = page.get_by_role("group", name="On this day, entry 1")
        story.get_by_label("Link").fill("https://news.example/flu")
        entry.get_by_label("Year").fill("1969")
        page.get_by_role("button", name="Add a story to topic 1").click()
        assert page.get_by_label("Story title").nth(1).input_value() == ""
        assert page.get_by_label("Story title").nth(0).input_value() == "Flu shots are free"
        page.get_by_role("button", name="Preview").click()
        preview = page.frame_locator("iframe.preview")
        assert "Flu shots are free" in preview.locator("body").inner_text()
        admin_browser._audit(browser, page, "issue-compose")
        page.get_by_role("button", name="Record as a test issue").click()
        assert "Recorded test issue" in page.get_by_role("status").inner_text()
        page.get_by_role("button", name="Record the issue").click()
        assert page.locator(".flash").inner_text().startswith("Recorded manual issue")
        recorded = service.issues.list(2)
        assert [issue.kind for issue in recorded] == ["manual", "test"]
        assert recorded[0].subject == "Spring at the clinic"
