"""Admin → Issues over HTTP: the recorded issues, each previewed through a sandboxed frame whose
preview answers with a ``sandbox`` policy, and "Record a digest" (kind, date and optional content
as JSON) through the service method and the JSON reader ``digest --kind KIND --date DATE
--content FILE`` uses: a refused run shows the form again with the reason and what was typed,
and records and audits nothing."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import urlencode

import pytest

from newsletter_connector.errors import InvalidRequest
from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.model.issue import load_content
from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.admin.issues import (
    LIST_LIMIT,
    MAX_CONTENT_BYTES,
    MAX_DIGEST_FORM_BYTES,
)
from tests.support.admin import csrf_token, get_page, post_form, sign_in
from tests.support.pages_helpers import FORM, ORIGIN

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
    session = sign_in(client)
    page = get_page(client, "/admin/issues", session)
    assert page.status_code == 200
    assert "frame-src 'self'" in page.headers["content-security-policy"]
    [frame] = re.findall(r"<iframe [^>]*>", page.text)
    src = f"{BASE}/admin/issues/{record.id}/preview"
    assert frame.startswith(f'<iframe sandbox src="{src}" ')
    assert "allow-" not in frame
    assert "Hi &lt;there&gt;" in page.text and "<there>" not in page.text
    preview = get_page(client, f"/admin/issues/{record.id}/preview", session)
    assert preview.status_code == 200
    assert preview.text == service.issues.get(record.id).html
    assert preview.headers["content-security-policy"] == PREVIEW_POLICY
    assert preview.headers["x-frame-options"] == "SAMEORIGIN"
    assert preview.headers["cache-control"] == "no-store"
    assert preview.headers["content-type"] == "text/html; charset=utf-8"
    assert get_page(client, "/admin/issues/999/preview", session).status_code == 404


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_the_list_pages_back_by_id_twenty_issues_a_page(
    client: Any, service: Any, admin_user: str
) -> None:
    ids = [_record(service).id for _ in range(LIST_LIMIT + 5)]
    session = sign_in(client)

    def shown(page: Any) -> list[int]:
        return [int(n) for n in re.findall(r'<h3 id="issue-(\d+)">', page.text)]

    newest = get_page(client, "/admin/issues", session)
    assert shown(newest) == ids[::-1][:LIST_LIMIT]
    assert "Newest issues</a>" not in newest.text
    older_link = re.search(r'<a href="([^"]*)">Older issues</a>', newest.text)[1]
    assert older_link == f"{BASE}/admin/issues?before={ids[5]}"
    older = get_page(client, older_link[len(BASE) :], session)
    assert shown(older) == ids[:5][::-1]
    assert "Older issues</a>" not in older.text and "Newest issues</a>" in older.text
    for bad in ("x", "0", "-3", "9223372036854775808"):
        refused = get_page(client, f"/admin/issues?before={bad}", session)
        assert refused.status_code == 400
        assert "before must be a positive whole number (the id of an issue)." in refused.text


@pytest.mark.parametrize("issue_id", ["0", "9223372036854775808", "9" * 23, "-1", "\u00b2"])
def test_a_preview_id_out_of_range_is_the_404_of_an_unknown_issue(
    client: Any, session: str, issue_id: str
) -> None:
    assert get_page(client, f"/admin/issues/{issue_id}/preview", session).status_code == 404


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_record_a_test_digest_runs_the_cli_s_service_method_and_is_audited(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    page = get_page(client, "/admin/issues", session)
    assert "No content plugin is installed" not in page.text
    fields = {"csrf_token": csrf_token(page)}
    result = post_form(client, "/admin/issues/digest", fields, cookies={COOKIE_NAME: session})
    [issue] = service.issues.list()
    assert result.status_code == 303
    assert result.headers["location"] == f"{BASE}/admin/issues#issue-{issue.id}"
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
    session = sign_in(client)
    page = get_page(client, "/admin/issues", session)
    assert "No content plugin is installed" in page.text
    assert "No issue has been recorded yet." in page.text
    fields = {"csrf_token": csrf_token(page)}
    result = post_form(client, "/admin/issues/digest", fields, cookies={COOKIE_NAME: session})
    assert result.status_code == 400
    assert 'role="alert" id="digest-error">Nothing was recorded: no issue content: no plugin' in (
        result.text
    )
    assert service.issues.list() == []
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


@pytest.mark.parametrize(("token", "origin"), [("wrong", ORIGIN), ("", "https://evil.example")])
@pytest.mark.parametrize("given", ["", json.dumps(sample_issue_content())])
def test_a_test_digest_without_its_token_or_from_elsewhere_records_nothing(
    client: Any, service: Any, admin_user: str, token: str, origin: str, given: str
) -> None:
    session = sign_in(client)
    token = token or csrf_token(get_page(client, "/admin/issues", session))
    result = client.simulate_post(
        "/admin/issues/digest",
        body=urlencode({"csrf_token": token, "content": given}),
        headers={**FORM, "Origin": origin},
        cookies={COOKIE_NAME: session},
    )
    assert result.status_code == 403
    assert service.issues.list() == []
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


def _digest(client: Any, session: str, **fields: str) -> Any:
    token = csrf_token(get_page(client, "/admin/issues", session))
    return post_form(
        client,
        "/admin/issues/digest",
        {**fields, "csrf_token": token},
        cookies={COOKIE_NAME: session},
    )


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_the_form_records_the_chosen_kind_and_date(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    page = get_page(client, "/admin/issues", session)
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
    session = sign_in(client)
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


def _textarea(page: Any) -> str:
    """The text the "Content (JSON)" field shows (the parser drops the newline after the tag)."""
    match = re.search(
        r'<textarea id="content" name="content"[^>]*>\n(.*?)</textarea>', page.text, re.S
    )
    assert match is not None
    return unescape(match[1])


def test_the_content_field_is_labelled_and_hinted(client: Any, admin_user: str) -> None:
    page = get_page(client, "/admin/issues", sign_in(client))
    assert '<label for="content">Content (JSON, optional)</label>' in page.text
    hint = re.search(r'<span class="hint" id="content-hint">(.*?)</span>', page.text)[1]
    for key in ("briefing", "on_this_day", "puzzle_hint", "topics", "subject"):
        assert f"<code>{key}</code>" in hint
    assert "at most 64&nbsp;KiB" in hint
    assert 'aria-describedby="content-hint">' in page.text
    assert _textarea(page) == ""


def test_content_given_as_json_is_recorded_verbatim_with_or_without_a_plugin(
    client: Any, service: Any, admin_user: str
) -> None:
    given = sample_issue_content(subject="Given <subject> & more")
    session = sign_in(client)
    text = "\n" + json.dumps(given, indent=2)
    result = _digest(client, session, kind="manual", date="2026-02-18", content=text)
    [issue] = service.issues.list(include_html=True)
    assert result.status_code == 303
    assert result.headers["location"] == f"{BASE}/admin/issues#issue-{issue.id}"
    assert (issue.kind, issue.issue_date) == ("manual", "2026-02-18")
    assert issue.subject == "Given <subject> & more"  # not the plugin's "Spring <news>"
    assert issue.sections == {key: given[key] for key in issue.sections}
    assert set(issue.sections) == set(given) - {"subject"}
    assert "Medicare open enrollment" in issue.html
    assert _flash(client, result, session) == (
        f"Recorded manual issue {issue.id} for 2026-02-18: Given <subject> & more"
    )
    [act] = service.admin_audit.latest(1)
    assert (act.action, act.target) == ("issue.digest", f"manual issue {issue.id}")
    # the redirect leads to the issue's heading, followed by its preview
    page = get_page(client, "/admin/issues", session)
    anchor = f'<h3 id="issue-{issue.id}">Given &lt;subject&gt; &amp; more</h3>'
    after = page.text[page.text.index(anchor) :]
    assert f'src="{BASE}/admin/issues/{issue.id}/preview"' in after.split("</section>")[0]


def test_a_test_issue_from_content_is_marked_test(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    given = json.dumps(sample_issue_content(subject="Dry run"))
    assert _digest(client, session, content=given).status_code == 303
    [issue] = service.issues.list()
    assert (issue.kind, issue.subject) == ("test", "[TEST] Dry run")


def _refused(result: Any, service: Any, message: str) -> None:
    """The form came back (400) with the reason (beginning ``message``) on the content field;
    nothing recorded or audited."""
    assert result.status_code == 400
    assert f'role="alert" id="digest-error">Nothing was recorded: {message}' in result.text
    assert 'aria-describedby="content-hint digest-error"' in result.text
    assert service.issues.list() == []
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("{not json", "line 1, column 2"),
        ('{\n  "briefing": {},\n  "topics": ]\n}', "line 3, column 13"),
        ("\n\n{,}", "line 3, column 2"),
        ("null", None),
        ('["briefing"]', None),
    ],
    ids=["syntax", "third-line", "leading-newlines", "null", "array"],
)
def test_content_that_is_no_json_object_shows_the_form_again_naming_where(
    client: Any, service: Any, admin_user: str, text: str, where: str | None
) -> None:
    session = sign_in(client)
    result = _digest(client, session, kind="weekly", date="2026-02-18", content=text)
    with pytest.raises(InvalidRequest) as caught:
        load_content(text)  # what `digest --content FILE` reports too
    message = caught.value.message
    if where is not None:
        assert f"issue content is not valid JSON ({where}: " in message
    _refused(result, service, _escaped(message))
    assert '<option value="weekly" selected>' in result.text
    assert 'name="date" type="date" value="2026-02-18"' in result.text
    assert _textarea(result) == text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            sample_issue_content(
                on_this_day=[{"year": "1877", "text": "x", "url": "https://a.example"}]
            ),
            "On this day, entry 1 (on_this_day[0].year in the JSON): the year must be a whole "
            "number",
        ),
        (
            {**sample_issue_content(), "footer": "x"},
            "The issue (footer in the JSON): this is not a part an issue has",
        ),
        (
            sample_issue_content(subject="x" * 501),
            "The issue (subject in the JSON): the subject is too long: at most 500 characters, "
            "and it has 501",
        ),
    ],
    ids=["wrong-type", "unknown-key", "long-subject"],
)
def test_content_the_service_refuses_shows_its_problem_in_words_and_its_json_place(
    client: Any, service: Any, admin_user: str, content: dict[str, Any], message: str
) -> None:
    session = sign_in(client)
    text = json.dumps(content)
    result = _digest(client, session, kind="manual", content=text)
    _refused(result, service, message)
    assert _textarea(result) == text
    assert "issue content:" not in result.text and "sections." not in result.text


def test_every_problem_of_the_json_content_is_listed_in_words(
    client: Any, service: Any, admin_user: str
) -> None:
    content = sample_issue_content()
    content["topics"][0]["items"][0]["url"] = "news.example/flu"
    content["topics"][1]["items"][0]["url"] = "ftp://bank.example/rates"
    del content["briefing"]["title"]
    result = _digest(client, sign_in(client), kind="manual", content=json.dumps(content))
    assert result.status_code == 400
    shown = unescape(result.text)
    assert "Nothing was recorded: 3 things need changing in the content." in shown
    for words in (
        "Briefing (briefing.title in the JSON): the title is missing",
        "Topic 1, story 1 (topics[0].items[0].url in the JSON): the link must start with "
        "https:// or http://",
        "Topic 2, story 1 (topics[1].items[0].url in the JSON): the link must start with "
        "https:// or http://",
    ):
        assert f"<li>{words}</li>" in shown
    assert "issue content:" not in shown and "sections." not in shown
    assert service.issues.list() == []


def test_content_over_the_limit_is_refused_and_echoed_cut(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    text = json.dumps(sample_issue_content(puzzle_hint="x" * MAX_CONTENT_BYTES))
    result = _digest(client, session, kind="manual", date="2026-02-18", content=text)
    size = len(text.encode("utf-8"))
    _refused(
        result,
        service,
        f"the content must be at most {MAX_CONTENT_BYTES} bytes of JSON (64 KiB); it has {size}",
    )
    assert _textarea(result) == text[:MAX_CONTENT_BYTES]
    assert 'name="date" type="date" value="2026-02-18"' in result.text


def test_content_at_the_limit_fits_the_form_even_when_every_byte_is_escaped(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    bare = json.dumps(sample_issue_content(puzzle_hint=""), ensure_ascii=False)
    room = MAX_CONTENT_BYTES - len(bare.encode("utf-8"))
    text = bare.replace('"puzzle_hint": ""', '"puzzle_hint": "' + "é" * (room // 2) + '"')
    text += " " * (MAX_CONTENT_BYTES - len(text.encode("utf-8")))
    assert len(text.encode("utf-8")) == MAX_CONTENT_BYTES
    result = _digest(client, session, kind="manual", content=text)
    assert result.status_code == 303
    [issue] = service.issues.list(include_html=True)
    assert issue.sections["puzzle_hint"] == "é" * (room // 2)


def test_a_form_body_over_the_digest_form_s_cap_is_413(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    result = _digest(client, session, kind="manual", content="x" * MAX_DIGEST_FORM_BYTES)
    assert result.status_code == 413
    assert service.issues.list() == []
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


@pytest.mark.parametrize("content", ["without content"], indirect=True)
def test_without_a_plugin_an_empty_content_field_asks_the_plugin_and_fails(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    result = _digest(client, session, kind="manual", content="  \n ")
    _refused(result, service, "no issue content: no plugin answered newsletter_issue_content")


@pytest.mark.parametrize("content", ["without content"], indirect=True)
def test_each_issue_says_whether_its_event_reached_the_platform(
    client: Any, service: Any, session: str
) -> None:
    delivered, waiting = _record(service), _record(service)  # the older is sent first
    with service.storage.transaction() as uow:
        [batch] = uow.outbox.claim_batches(
            now=T0, lease_until=T0 + timedelta(minutes=5), batch_size=1, max_batches=1
        )
        uow.outbox.settle_delivered([batch.id], at=T0 + timedelta(minutes=1))
    page = unescape(get_page(client, "/admin/issues", session).text)
    lines = re.findall(r"To the platform: ([^<]*)\.</p>", page)
    assert lines == ["Waiting to be sent", "Delivered 2026-03-01 12:01 UTC"], lines
    assert waiting.event_id and delivered.event_id
