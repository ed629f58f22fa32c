"""Settings and the audit log in a real browser (headless Chromium, JavaScript off, the app
served by gunicorn in a subprocess trusting a local TLS receiver's CA).

Signs in, sets the platform connection to the receiver and tests it (the receiver gets the
empty batch), turns the list source on and off, and audits the three pages with axe-core (no
violation of any impact). With ``NEWSLETTER_WRITE_SCREENSHOTS=1`` it saves
``docs/images/admin/settings.png``, ``connection.png`` and ``audit.png`` for docs/admin.md.
FAILS, never skips, when Chromium is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab, served_site, sign_in
from tests.support.tls_receiver import TlsReceiver
from tests.web.admin.test_admin_browser import _audit

pytestmark = pytest.mark.system

TOKEN = "platform-token-0123456789"
LIST_KEY = "list-source-key-0123"


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path_factory.mktemp("receiver"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def site(newsletter_database_url: str, receiver: TlsReceiver) -> Iterator[str]:
    with served_site(newsletter_database_url, NEWSLETTER_CA_BUNDLE=str(receiver.ca_file)) as base:
        yield base


def test_set_and_test_the_connection_toggle_the_list_source_and_read_the_audit(
    browser: Any,
    site: str,
    receiver: TlsReceiver,
    newsletter_service: Any,
) -> None:
    newsletter_service.admin_access.create_user("ada", PASSWORD)
    with scriptless_tab(browser) as page:
        sign_in(page, site)

        page.get_by_role("navigation").get_by_role("link", name="Platform connection").click()
        assert page.locator("h1").inner_text() == "Platform connection"
        page.get_by_label("Platform address").fill(receiver.base)
        page.get_by_label("Transport").select_option("events")
        page.get_by_label("Token").fill(TOKEN)
        page.get_by_role("button", name="Save connection").click()
        assert f"Connection set: {receiver.base} via events." in page.locator(".flash").inner_text()
        assert receiver.base in page.locator("#connection-state").inner_text()
        assert TOKEN not in page.content()
        page.get_by_role("button", name="Test connection").click()
        flash = page.locator(".flash").inner_text()
        assert f"reachable: HTTP 200 from {receiver.base}/v1/events" in flash
        assert [(r.path, r.body) for r in receiver.received] == [("/v1/events", [])]
        _audit(browser, page, "connection")

        page.get_by_role("navigation").get_by_role("link", name="List source and outbox").click()
        assert page.locator("h1").inner_text() == "List source and outbox"
        page.get_by_label("User name").fill("platform")
        page.get_by_label("Key", exact=True).fill(LIST_KEY)
        page.get_by_role("button", name="Save list-source credentials").click()
        state = page.locator("#listsource-state").inner_text()
        assert state.startswith("On, for user platform.")
        assert newsletter_service.admin.verify_listsource_credentials("platform", LIST_KEY)
        assert LIST_KEY not in page.content()
        _audit(browser, page, "settings")
        page.get_by_role("button", name="Turn the list source off").click()
        assert page.locator("#listsource-state").inner_text().startswith("Off:")
        assert not newsletter_service.admin.listsource_status().enabled

        page.get_by_role("navigation").get_by_role("link", name="Audit log").click()
        assert page.locator("h1").inner_text() == "Audit log"
        actions = page.locator("tbody tr td:nth-child(3)").all_inner_texts()
        assert actions == [
            "listsource.disable",
            "listsource.set",
            "connection.test",
            "connection.set",
            "login",
        ]
        assert TOKEN not in page.content() and LIST_KEY not in page.content()
        _audit(browser, page, "audit")
