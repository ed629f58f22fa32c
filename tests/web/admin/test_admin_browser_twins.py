"""The admin twins of CLI acts in a real browser (headless Chromium, JavaScript off, the app
served by gunicorn in a subprocess): replays one failed outbox batch from its page, records a
digest that is refused (no content plugin is installed), sees the form again and records it from
content pasted as JSON, landing at the new issue and its preview; adds an admin
user and deletes it after the confirm step. axe-core audits every page on the way (no
violation of any impact). With ``NEWSLETTER_WRITE_SCREENSHOTS=1`` it saves
``docs/images/admin/outbox-failed.png`` and ``admin-users.png`` for docs/admin.md. FAILS, never
skips, when Chromium is missing.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from newsletter_connector.service.events import queue_event
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab, sign_in
from tests.web.admin.test_admin_browser import _audit, site  # noqa: F401 - a fixture

pytestmark = pytest.mark.system

NEW_PASSWORD = "another fine passphrase"


def _failed_batches(service: Any, count: int) -> list[str]:
    """``count`` failed batches of one event each; their ids in id order."""
    with service.storage.transaction() as uow:
        for n in range(count):
            queue_event(uow, service.context, "contact.message", {"n": n})
    now = service.context.clock()
    with service.storage.transaction() as uow:
        claimed = uow.outbox.claim_batches(
            now=now, lease_until=now + timedelta(minutes=1), batch_size=1, max_batches=count
        )
        for batch in claimed:
            uow.outbox.mark_failed(batch.id, error="HTTP 400 from POST /v1/events", at=now)
    return sorted(batch.id for batch in claimed)


def test_replay_a_batch_record_a_refused_digest_and_manage_admin_users(
    browser: Any,
    site: str,  # noqa: F811 - the imported fixture
    newsletter_service: Any,
) -> None:
    newsletter_service.admin_access.create_user("ada", PASSWORD)
    failed = _failed_batches(newsletter_service, 2)
    with scriptless_tab(browser) as page:
        sign_in(page, site)

        page.get_by_role("navigation").get_by_role("link", name="List source and outbox").click()
        page.get_by_role("link", name="See the failed batches").click()
        assert page.locator("h1").inner_text() == "Failed outbox batches"
        assert page.locator("tbody tr").count() == 2
        _audit(browser, page, "outbox-failed")
        page.get_by_role("button", name=f"Replay {failed[0]}").click()
        assert f"Batch {failed[0]} replayed" in page.locator(".flash").inner_text()
        assert page.locator("tbody tr").count() == 1
        with newsletter_service.storage.transaction(write=False) as uow:
            assert uow.outbox.get_batch(failed[0]).state == "pending"

        page.get_by_role("navigation").get_by_role("link", name="Issues").click()
        page.get_by_label("Kind").select_option("manual")
        page.get_by_role("button", name="Record a digest").click()
        alert = page.get_by_role("alert").inner_text()
        assert alert.startswith("Nothing was recorded: no issue content")
        assert page.get_by_label("Kind").input_value() == "manual"
        _audit(browser, page, "issues-refused", screenshot=False)
        assert newsletter_service.issues.list() == []
        page.get_by_label("Content (JSON, optional)").fill(
            json.dumps(sample_issue_content(subject="Pasted edition"))
        )
        page.get_by_role("button", name="Record a digest").click()
        [issue] = newsletter_service.issues.list()
        assert (issue.kind, issue.subject) == ("manual", "Pasted edition")
        assert page.locator(".flash").inner_text().startswith(f"Recorded manual issue {issue.id}")
        assert page.url.endswith(f"/admin/issues#issue-{issue.id}")
        assert page.frame_locator("iframe").locator("body").inner_text() != ""

        page.get_by_role("navigation").get_by_role("link", name="Admin users").click()
        assert page.locator("h1").inner_text() == "Admin users"
        page.get_by_label("Username").fill("grace")
        page.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
        page.get_by_label("Password again").fill(NEW_PASSWORD)
        page.get_by_role("button", name="Add admin user").click()
        assert "Admin user 'grace' created" in page.locator(".flash").inner_text()
        assert NEW_PASSWORD not in page.content()
        _audit(browser, page, "admin-users")
        page.get_by_role("link", name="Delete grace").click()
        assert page.locator("h1").inner_text() == "Delete the admin user “grace”?"
        _audit(browser, page, "admin-user-delete", screenshot=False)
        page.get_by_role("button", name="Delete admin user").click()
        assert "Admin user 'grace' deleted" in page.locator(".flash").inner_text()
        users = newsletter_service.admin_access.list_users()
        assert [user.username for user in users] == ["ada"]


def test_an_owner_makes_an_editor_who_is_refused_the_settings(
    browser: Any,
    site: str,  # noqa: F811 - the imported fixture
    newsletter_service: Any,
) -> None:
    access = newsletter_service.admin_access
    access.create_user("ada", PASSWORD)
    access.create_user("eve", PASSWORD, role="owner")
    with scriptless_tab(browser) as page:
        sign_in(page, site)
        page.get_by_role("navigation").get_by_role("link", name="Admin users").click()
        page.get_by_role("button", name="Make editor eve").click()
        assert "eve is now an editor" in page.locator(".flash").inner_text()
        assert {user.username: user.role for user in access.list_users()}["eve"] == "editor"
        assert page.get_by_role("button", name="Make owner eve").count() == 1
        _audit(browser, page, "admin-users-roles", screenshot=False)
    with scriptless_tab(browser) as page:
        sign_in(page, site, username="eve")
        navigation = page.get_by_role("navigation")
        assert navigation.get_by_role("link", name="Subscribers").count() == 1
        assert navigation.get_by_role("link", name="API keys").count() == 0
        answer = page.goto(site + "/admin/settings/api-keys")
        assert answer is not None and answer.status == 403
        assert page.locator("h1").inner_text() == "Not open to editors"
        _audit(browser, page, "admin-outside-role", screenshot=False)
        page.get_by_role("link", name="Back to the dashboard").click()
        assert page.locator("h1").inner_text() == "Dashboard"
