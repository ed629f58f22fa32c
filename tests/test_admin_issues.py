"""Admin → Issues over HTTP: the recorded issues, each previewed through a sandboxed frame whose
preview answers with a ``sandbox`` policy, and "Record a test digest" through the service
method ``digest --kind test`` uses (a clear flash when no content plugin is installed)."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape
from typing import Any
from urllib.parse import urlencode

import falcon.testing
import pytest

from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.app import create_app

from .support.pages_helpers import FORM, ORIGIN
from .test_admin_pages import PASSWORD, _page, _post, _sign_in, _token

T0 = datetime(2026, 3, 1, 12, 0, 0)
PREVIEW_POLICY = "sandbox; default-src 'none'; img-src https: data:; style-src 'unsafe-inline'"


class ContentPlugin:
    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        return sample_issue_content(subject="Spring <news>")


@pytest.fixture(params=["with content", "without content"])
def content(request: Any) -> bool:
    return request.param == "with content"


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, content: bool) -> Any:
    return NewsletterService.build(
        newsletter_settings,
        storage=newsletter_storage,
        plugins=[ContentPlugin()] if content else [],
        clock=lambda: T0,
    )


@pytest.fixture
def client(service: Any) -> Any:
    return falcon.testing.TestClient(create_app(service=service))


@pytest.fixture
def admin_user(service: Any) -> str:
    service.admin_access.create_user("ada", PASSWORD)
    return "ada"


def _record(service: Any) -> Any:
    return service.issues.run_digest("manual", content=sample_issue_content(subject="Hi <there>"))


def _flash(client: Any, result: Any, session: str) -> str:
    cookies = {
        COOKIE_NAME: session,
        "newsletter_admin_flash": result.cookies["newsletter_admin_flash"].value,
    }
    page = client.simulate_get("/admin/issues", cookies=cookies)
    return unescape(re.search(r'<p class="flash" role="status">([^<]*)</p>', page.text)[1])


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_signed_out_visitors_are_sent_to_the_login(
    client: Any, service: Any, admin_user: str
) -> None:
    record = _record(service)
    for method, path in (
        ("GET", "/admin/issues"),
        ("GET", f"/admin/issues/{record.id}/preview"),
        ("POST", "/admin/issues/test-digest"),
    ):
        result = client.simulate_request(method, path, headers={**FORM, "Origin": ORIGIN})
        assert result.status_code == 303, path
        assert result.headers["location"] == BASE + "/admin/login"
        assert "Hi" not in result.text
    assert len(service.issues.list()) == 1


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_each_issue_is_previewed_in_a_sandboxed_frame(
    client: Any, service: Any, admin_user: str
) -> None:
    record = _record(service)
    session = _sign_in(client)
    page = _page(client, "/admin/issues", session)
    assert page.status_code == 200
    assert "frame-src 'self'" in page.headers["content-security-policy"]
    [frame] = re.findall(r"<iframe [^>]*>", page.text)
    src = f"{BASE}/admin/issues/{record.id}/preview"
    assert frame.startswith(f'<iframe sandbox src="{src}" ')
    assert "allow-" not in frame
    assert "Hi &lt;there&gt;" in page.text and "<there>" not in page.text
    preview = _page(client, f"/admin/issues/{record.id}/preview", session)
    assert preview.status_code == 200
    assert preview.text == service.issues.get(record.id).html
    assert preview.headers["content-security-policy"] == PREVIEW_POLICY
    assert preview.headers["x-frame-options"] == "SAMEORIGIN"
    assert preview.headers["cache-control"] == "no-store"
    assert preview.headers["content-type"] == "text/html; charset=utf-8"
    assert _page(client, "/admin/issues/999/preview", session).status_code == 404


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_record_a_test_digest_runs_the_cli_s_service_method_and_is_audited(
    client: Any, service: Any, admin_user: str
) -> None:
    session = _sign_in(client)
    page = _page(client, "/admin/issues", session)
    assert "No content plugin is installed" not in page.text
    fields = {"csrf_token": _token(page)}
    result = _post(client, "/admin/issues/test-digest", fields, cookies={COOKIE_NAME: session})
    assert result.status_code == 303 and result.headers["location"] == BASE + "/admin/issues"
    [issue] = service.issues.list()
    assert issue.kind == "test" and issue.subject == "[TEST] Spring <news>"
    assert _flash(client, result, session) == f"Recorded test issue {issue.id}: {issue.subject}"
    act = service.admin_audit.latest(1)[0]
    assert (act.action, act.target) == ("issue.test_digest", f"issue {issue.id}")


@pytest.mark.parametrize("content", ["without content"], indirect=True)
def test_without_a_content_plugin_the_page_says_so_and_the_act_fails_clearly(
    client: Any, service: Any, admin_user: str
) -> None:
    session = _sign_in(client)
    page = _page(client, "/admin/issues", session)
    assert "No content plugin is installed" in page.text
    assert "No issue has been recorded yet." in page.text
    fields = {"csrf_token": _token(page)}
    result = _post(client, "/admin/issues/test-digest", fields, cookies={COOKIE_NAME: session})
    assert result.status_code == 303
    flash = _flash(client, result, session)
    assert flash.startswith("No test digest was recorded: no issue content: no plugin answered")
    assert service.issues.list() == []
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


@pytest.mark.parametrize("content", ["with content"], indirect=True)
@pytest.mark.parametrize(("token", "origin"), [("wrong", ORIGIN), ("", "https://evil.example")])
def test_a_test_digest_without_its_token_or_from_elsewhere_records_nothing(
    client: Any, service: Any, admin_user: str, token: str, origin: str
) -> None:
    session = _sign_in(client)
    token = token or _token(_page(client, "/admin/issues", session))
    result = client.simulate_post(
        "/admin/issues/test-digest",
        body=urlencode({"csrf_token": token}),
        headers={**FORM, "Origin": origin},
        cookies={COOKIE_NAME: session},
    )
    assert result.status_code == 403
    assert service.issues.list() == []
