"""The getting-started walkthrough works as written: the Flask site of step 4, mounted, fed by
its content plugin, with the sync runner started beside it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.docblocks import docblock

STATUS = "/newsletter/api/newsletter/v1/status"


@pytest.fixture
def walkthrough_env(newsletter_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 2's environment (the test database stands for the site's)."""
    monkeypatch.setenv("NEWSLETTER_DATABASE_URL", newsletter_settings.database_url)
    monkeypatch.setenv("NEWSLETTER_BASE_URL", "https://example.org/newsletter")
    monkeypatch.setenv("NEWSLETTER_SITE_NAME", "Example News")
    monkeypatch.setenv("NEWSLETTER_POSTAL_ADDRESS", "1 Main Street, Springfield")
    monkeypatch.setenv("NEWSLETTER_SITE_SECRET", "walkthrough-secret")
    monkeypatch.setenv("NEWSLETTER_CONFIG", "")


def test_step_four_flask_site(walkthrough_env: None, auth: dict[str, str]) -> None:
    namespace: dict[str, Any] = {"__name__": "docs_afternoon"}
    exec(compile(docblock("afternoon-flask-site"), "<docs:afternoon>", "exec"), namespace)
    app, newsletter, sync = namespace["app"], namespace["newsletter"], namespace["sync"]
    try:
        assert sync.running
        client = app.test_client()
        assert "/newsletter/signup" in client.get("/").get_data(as_text=True)
        status = client.get(STATUS, headers=auth)
        assert status.get_json() == {"ok": True, "version": "v1", "key": "tests"}
        # The content plugin feeds digest runs; links are built from base_url.
        issue = newsletter.service.issues.run_digest("manual")
        assert issue.sections["briefing"]["title"] == "Today's briefing"
        assert issue.site_url == "https://example.org"
        created = client.post(
            "/newsletter/api/newsletter/v1/subscribers",
            json={"email": "a@example.org"},
            headers=auth,
        )
        assert created.status_code == 201
        assert created.get_json()["confirm_url"].startswith("https://example.org/newsletter/")
    finally:
        assert sync.stop(timeout=30)
        newsletter.service.close()
