"""Admin → Issues over HTTP: the recorded issues, each previewed through a sandboxed frame whose
preview answers with a ``sandbox`` policy, and "Record a digest" (kind and date) through the
service method ``digest --kind KIND --date DATE`` uses: a refused run shows the form again with
the reason and records nothing."""

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
        ("POST", "/admin/issues/digest"),
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
    result = _post(client, "/admin/issues/digest", fields, cookies={COOKIE_NAME: session})
    assert result.status_code == 303 and result.headers["location"] == BASE + "/admin/issues"
    [issue] = service.issues.list()
    assert issue.kind == "test" and issue.subject == "[TEST] Spring <news>"
    assert issue.issue_date == "2026-03-01"  # today, UTC
    assert (
        _flash(client, result, session)
        == f"Recorded test issue {issue.id} for 2026-03-01: {issue.subject}"
    )
    act = service.admin_audit.latest(1)[0]
    assert (act.action, act.target) == ("issue.digest", f"test issue {issue.id}")


@pytest.mark.parametrize("content", ["without content"], indirect=True)
def test_without_a_content_plugin_the_page_says_so_and_the_act_fails_clearly(
    client: Any, service: Any, admin_user: str
) -> None:
    session = _sign_in(client)
    page = _page(client, "/admin/issues", session)
    assert "No content plugin is installed" in page.text
    assert "No issue has been recorded yet." in page.text
    fields = {"csrf_token": _token(page)}
    result = _post(client, "/admin/issues/digest", fields, cookies={COOKIE_NAME: session})
    assert result.status_code == 400
    assert 'role="alert" id="digest-error">Nothing was recorded: no issue content: no plugin' in (
        result.text
    )
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
        "/admin/issues/digest",
        body=urlencode({"csrf_token": token}),
        headers={**FORM, "Origin": origin},
        cookies={COOKIE_NAME: session},
    )
    assert result.status_code == 403
    assert service.issues.list() == []


def _digest(client: Any, session: str, **fields: str) -> Any:
    token = _token(_page(client, "/admin/issues", session))
    return _post(
        client,
        "/admin/issues/digest",
        {**fields, "csrf_token": token},
        cookies={COOKIE_NAME: session},
    )


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_the_form_records_the_chosen_kind_and_date(
    client: Any, service: Any, admin_user: str
) -> None:
    session = _sign_in(client)
    page = _page(client, "/admin/issues", session)
    assert '<option value="test" selected>test</option>' in page.text
    result = _digest(client, session, kind="weekly", date="2026-02-18")
    assert result.status_code == 303
    [issue] = service.issues.list()
    assert (issue.kind, issue.issue_date) == ("weekly", "2026-02-18")
    assert _flash(client, result, session).startswith(
        f"Recorded weekly issue {issue.id} for 2026-02-18: "
    )
    act = service.admin_audit.latest(1)[0]
    assert (act.action, act.target) == ("issue.digest", f"weekly issue {issue.id}")


@pytest.mark.parametrize("content", ["with content"], indirect=True)
@pytest.mark.parametrize(
    ("fields", "message", "field"),
    [
        (
            {"kind": "daily", "date": "2026-02-10"},
            "the daily issue for the day of 2026-02-10 is already recorded",
            "date",
        ),
        (
            {"kind": "manual", "date": "2026-02-30"},
            "date must be a real calendar date (YYYY-MM-DD)",
            "date",
        ),
        ({"kind": "manual", "date": "yesterday"}, "date must be a date in YYYY-MM-DD form", "date"),
        ({"kind": "yearly", "date": ""}, "kind must be one of daily, weekly, manual, test", "kind"),
    ],
    ids=["already-recorded", "no-such-day", "not-a-date", "bad-kind"],
)
def test_a_refused_digest_shows_the_form_again_and_records_nothing(
    client: Any,
    service: Any,
    admin_user: str,
    fields: dict[str, str],
    message: str,
    field: str,
) -> None:
    service.issues.run_digest("daily", "2026-02-10")
    session = _sign_in(client)
    result = _digest(client, session, **fields)
    assert result.status_code == 400
    assert f'role="alert" id="digest-error">Nothing was recorded: {message}' in result.text
    if field == "kind":
        assert '<select id="kind" name="kind" aria-describedby="digest-error">' in result.text
    else:
        assert 'aria-describedby="date-hint digest-error"' in result.text
        assert f'name="date" type="date" value="{fields["date"]}"' in result.text
        assert f'<option value="{fields["kind"]}" selected>' in result.text
    assert len(service.issues.list()) == 1
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]
