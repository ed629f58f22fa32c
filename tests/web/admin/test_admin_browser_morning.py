"""An editor's morning in a real browser (headless Chromium, JavaScript off, the app under
gunicorn), at a phone's 390 px and a desktop's 1280 px: filter the bounced readers of one ZIP
prefix, unsubscribe three of them, fix a reader's name, resend a pending reader's
confirmation, compose and preview an issue and record it as a test, mark a message handled;
and the editor is refused the API keys page. Each act is checked through the service, and the
pages on the way with :func:`tests.support.screens.check_screens` (at both widths, once). With
``NEWSLETTER_WRITE_SCREENSHOTS=1`` the desktop walk saves the confirm step's screenshot,
``docs/images/admin/morning-confirm.png``, for docs/admin.md."""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

import pytest

from newsletter_connector.service.events import SUBSCRIBER_KEY_PURPOSE
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support import browser as browser_support
from tests.support.admin import PASSWORD
from tests.support.browser import SITE_SECRET, scriptless_tab, sign_in
from tests.support.screens import check_screens, write_screenshot
from tests.web.admin.test_admin_browser import SCREENSHOTS

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

own_site = browser_support.own_site


#: The pages of the walk whose desktop screenshot docs/admin.md shows.
DOC_SHOTS = frozenset({"morning-confirm"})


def _seed(service: Any, tag: str) -> dict[str, str]:
    """Four bounced readers in ZIP 021.., one bounced elsewhere, a confirmed reader whose name
    is misspelled, a pending reader and a message; the addresses by role."""
    people = {
        "b1": (f"{tag}-b1@example.org", "bounced", "02134"),
        "b2": (f"{tag}-b2@example.org", "bounced", "02199"),
        "b3": (f"{tag}-b3@example.org", "bounced", "02101"),
        "b4": (f"{tag}-b4@example.org", "bounced", "02155"),
        "far": (f"{tag}-far@example.org", "bounced", "10001"),
        "typo": (f"{tag}-typo@example.org", "confirmed", "02134"),
        "pending": (f"{tag}-pending@example.org", "pending", "60601"),
    }
    with service.storage.transaction() as uow:
        for key, (email, status, zip_code) in people.items():
            first = "Jonh" if key == "typo" else None
            uow.subscribers.add(
                make_subscriber_data(email, status=status, zip=zip_code, first_name=first)
            )
    service.messages.record(f"{tag}-writer@example.org", "Wren", "The puzzle was lovely.")
    return {key: email for key, (email, _status, _zip) in people.items()}


def _events(service: Any, email: str) -> list[str]:
    """The events the served site queued about ``email`` (keyed with its own secret)."""
    message = f"{SUBSCRIBER_KEY_PURPOSE}\x00{email}".encode()
    key = hmac.new(SITE_SECRET.encode(), message, hashlib.sha256).hexdigest()
    with service.storage.transaction(write=False) as uow:
        return [event.event_type for event in uow.outbox.events_about(key, limit=10)]


def _check(browser: Any, page: Any, name: str, width: int) -> None:
    """:func:`check_screens` (which looks at 390 and 1280 px) once, on the phone's walk; on
    the desktop's, the screenshot docs/admin.md shows, when the variable asks for it."""
    if width == 390:
        check_screens(browser, page, name)
    elif name in DOC_SHOTS and os.environ.get("NEWSLETTER_WRITE_SCREENSHOTS") == "1":
        write_screenshot(page, SCREENSHOTS / f"{name}.png")


@pytest.mark.parametrize("width", [390, 1280])
def test_an_editors_morning(browser: Any, own_site: tuple[str, Any], width: int) -> None:
    site, service = own_site
    tag = f"w{width}"
    editor = f"editor{width}"
    service.admin_access.create_user(editor, PASSWORD, role="editor")
    people = _seed(service, tag)
    with scriptless_tab(browser) as page:
        page.set_viewport_size({"width": width, "height": 900})
        sign_in(page, site, path="/admin/login", username=editor)

        # Filter the bounced readers of one ZIP prefix.
        page.get_by_role("navigation").get_by_role("link", name="Subscribers").click()
        page.get_by_label("Address begins with").fill(f"{tag}-")
        page.get_by_label("Status", exact=True).select_option("bounced")
        page.locator("summary").filter(has_text="More filters").click()
        page.get_by_label("ZIP code begins with").fill("021")
        page.get_by_role("button", name="Show subscribers").click()
        listed = page.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert listed == [people["b4"], people["b3"], people["b2"], people["b1"]]
        assert page.locator(".count").inner_text() == "4 subscribers match."
        _check(browser, page, "morning-list", width)

        # Unsubscribe three of them.
        for key in ("b1", "b2", "b3"):
            page.get_by_label(f"Tick {people[key]}").check()
        page.get_by_role("button", name="Unsubscribe…").click()
        assert page.locator("h1").inner_text() == "Unsubscribe 3 subscribers?"
        _check(browser, page, "morning-confirm", width)
        page.get_by_role("button", name="Unsubscribe them").click()
        assert page.locator(".flash").inner_text() == "3 subscribers unsubscribed."
        for key in ("b1", "b2", "b3"):
            assert service.subscribers.get(people[key]).status == "unsubscribed"
            assert _events(service, people[key]) == ["newsletter.unsubscribed"]
        assert service.subscribers.get(people["b4"]).status == "bounced"

        # Fix a reader's name.
        page.goto(f"{site}/admin/subscribers?address={tag}-typo")
        page.get_by_role("link", name=people["typo"]).click()
        page.get_by_label("First name").fill("John")
        page.get_by_role("button", name="Save details").click()
        assert page.locator(".flash").inner_text() == "Details saved."
        assert service.subscribers.get(people["typo"]).first_name == "John"

        # Resend a pending reader's confirmation.
        page.goto(f"{site}/admin/subscribers?status=pending&address={tag}-")
        page.get_by_role("link", name=people["pending"]).click()
        page.get_by_role("button", name="Resend the confirmation email").click()
        assert "asked to send the confirmation email again" in page.locator(".flash").inner_text()
        assert _events(service, people["pending"]) == ["newsletter.signup"]

        # Compose and preview an issue, and record it as a test.
        page.get_by_role("navigation").get_by_role("link", name="Issues").click()
        page.get_by_role("link", name="Write an issue").click()
        page.get_by_label("Subject").fill(f"Morning issue {width}")
        briefing = page.get_by_role("group", name="Briefing: the day's lead story")
        briefing.get_by_label("Title").fill("Clinics open late")
        briefing.get_by_label("Link").fill("https://news.example/clinics")
        briefing.get_by_label("Date of the story").fill("2026-03-01")
        page.get_by_role("button", name="Preview").click()
        preview = page.frame_locator("iframe.preview")
        assert "Clinics open late" in preview.locator("body").inner_text()
        _check(browser, page, "morning-compose", width)
        page.get_by_role("button", name="Record as a test issue").click()
        assert "Recorded test issue" in page.get_by_role("status").inner_text()
        latest = service.issues.latest()
        assert (latest.kind, latest.subject) == ("test", f"[TEST] Morning issue {width}")

        # Mark a message handled.
        page.get_by_role("navigation").get_by_role("link", name="Contact messages").click()
        writer = f"{tag}-writer@example.org"
        page.get_by_role("button", name=f"Mark handled the message from {writer}").click()
        assert "is marked handled" in page.locator(".flash").inner_text()
        handled = [m for m in service.messages.list_page(limit=100).items if m.email == writer]
        assert service.messages.handling_of(handled)[handled[0].id].handled_by == editor

        # The API keys page is not an editor's.
        refused = page.goto(f"{site}/admin/settings/api-keys")
        assert refused is not None and refused.status == 403
        assert page.get_by_role("navigation").get_by_role("link", name="API keys").count() == 0
        _check(browser, page, "morning-refused", width)
