"""Admin → Issues → Write an issue, over HTTP: the form starts from the content plugin's
content, its row buttons add and remove entries, topics and stories, Preview renders the draft
through the configured renderer into a sandboxed frame recording nothing, a test issue is
recorded first and the real one only for the same content, and a refused draft names its
field, records nothing and audits nothing."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape
from html.parser import HTMLParser
from typing import Any

import pytest

from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.web.admin.gate import COOKIE_NAME
from tests.support.admin import flash_of, followed, get_page, post_form

T0 = datetime(2026, 3, 1, 12, 0, 0)
COMPOSE = "/admin/issues/compose"
RECORD = "/admin/issues/compose/record"


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


class _Form(HTMLParser):
    """What a browser sends for the composer's form: inputs, selected options, textareas."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name:
            self.values[name] = a.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea, self.values[name] = name, ""
        elif tag == "select" and name:
            self._select = name
        elif (
            tag == "option"
            and self._select
            and ("selected" in a or self._select not in self.values)
        ):
            self.values[self._select] = a.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.values[self._textarea] += data


def fields_of(page: Any) -> dict[str, str]:
    parser = _Form()
    parser.feed(page.text)
    return parser.values


def press(client: Any, session: str, page: Any, path: str, **changes: str) -> Any:
    """Submit the page's form to ``path`` with ``changes`` typed in (a button is a field)."""
    fields = {**fields_of(page), **changes}
    return post_form(client, path, fields, cookies={COOKIE_NAME: session})


def _audited(service: Any) -> list[tuple[str, str | None]]:
    return [(act.action, act.target) for act in service.admin_audit.latest(20)]


FILLED = {
    "subject": "Our spring issue",
    "briefing_title": "Clinics open late",
    "briefing_url": "https://news.example/clinics",
    "briefing_date": "2026-03-01",
    "otd-0-year": "1969",
    "otd-0-text": "A walk on the moon",
    "otd-0-url": "https://news.example/moon",
    "puzzle_hint": "Think of spring.",
    "topic-0-label": "Health & care",
    "topic-0-summary": "What changed this week",
    "topic-0-item-0-title": "Flu shots are free",
    "topic-0-item-0-url": "https://news.example/flu",
    "topic-0-item-0-source": "Health desk",
}


def _blank_form(client: Any, session: str) -> Any:
    """The composer with one entry, one topic and one story, whatever the plugin says."""
    page = get_page(client, COMPOSE, session)
    assert page.status_code == 200
    fields = fields_of(page)
    fields.update(otd_rows="1", topic_rows="1", **{"topic-0-items": "1"})
    fields = {
        name: value
        for name, value in fields.items()
        if not re.match(r"topic-[1-9]|topic-0-item-[1-9]|otd-[1-9]", name)
    }
    return press_fields(client, session, fields, change="noop")


def press_fields(client: Any, session: str, fields: dict[str, str], **changes: str) -> Any:
    return post_form(client, COMPOSE, {**fields, **changes}, cookies={COOKIE_NAME: session})


@pytest.mark.parametrize("content", ["with content"], indirect=True)
def test_the_form_starts_from_the_content_plugin(client: Any, session: str) -> None:
    page = get_page(client, COMPOSE, session)
    fields = fields_of(page)
    sample = sample_issue_content()
    assert "Filled in from the site's content plugin" in page.text
    assert fields["subject"] == "Spring <news>"
    assert fields["briefing_title"] == sample["briefing"]["title"]
    assert fields["otd_rows"] == str(len(sample["on_this_day"]))
    assert fields["topic-0-slug"] == sample["topics"][0]["slug"]
    assert fields["kind"] == "manual"
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


@pytest.mark.parametrize("content", ["without content"], indirect=True)
def test_without_a_plugin_the_form_starts_blank_with_a_row_of_each(
    client: Any, session: str
) -> None:
    fields = fields_of(get_page(client, COMPOSE, session))
    assert fields["otd_rows"] == "1" and fields["topic_rows"] == "1"
    assert fields["topic-0-items"] == "1" and fields["subject"] == ""


def test_row_buttons_add_and_remove_entries_topics_and_stories(
    client: Any, service: Any, session: str
) -> None:
    page = _blank_form(client, session)
    page = press(client, session, page, COMPOSE, change="add-otd", **FILLED)
    assert fields_of(page)["otd_rows"] == "2"
    assert fields_of(page)["otd-0-text"] == "A walk on the moon"  # what was typed is kept
    page = press(client, session, page, COMPOSE, change="add-topic")
    page = press(client, session, page, COMPOSE, change="add-item-1")
    fields = fields_of(page)
    assert (fields["topic_rows"], fields["topic-1-items"]) == ("2", "2")
    page = press(client, session, page, COMPOSE, change="remove-otd-0")
    assert fields_of(page)["otd_rows"] == "1" and fields_of(page)["otd-0-text"] == ""
    page = press(client, session, page, COMPOSE, change="remove-topic-0")
    fields = fields_of(page)
    assert fields["topic_rows"] == "1" and fields["topic-0-items"] == "2"
    page = press(client, session, page, COMPOSE, change="remove-item-0-1")
    assert fields_of(page)["topic-0-items"] == "1"
    assert service.issues.list(10) == [] and _audited(service) == [("login", None)]


def test_preview_renders_the_draft_in_a_sandboxed_frame_and_records_nothing(
    client: Any, service: Any, session: str
) -> None:
    page = press(client, session, _blank_form(client, session), COMPOSE, change="preview", **FILLED)
    assert page.status_code == 200, page.text
    frame = re.search(r'<iframe class="preview" sandbox srcdoc="([^"]*)"', page.text)
    assert frame, page.text
    rendered = unescape(frame[1])
    assert "Clinics open late" in rendered and "Flu shots are free" in rendered
    assert "Health &amp; care" in rendered  # the renderer escaped the label itself
    assert "Preview: Our spring issue" in unescape(page.text)
    assert "script-src" not in page.headers["content-security-policy"]
    assert service.issues.list(10) == [] and _audited(service) == [("login", None)]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"briefing_url": "ftp://x"},
            "briefing_url",
            "Briefing: the link must start with https:// or http://",
        ),
        ({"briefing_title": " "}, "briefing_title", "Briefing: the title is required"),
        (
            {"otd-0-year": "nineteen"},
            "otd-0-year",
            "On this day, entry 1: the year must be a whole number",
        ),
        (
            {"topic-0-item-0-url": "news"},
            "topic-0-item-0-url",
            "Topic 1, story 1: the link must start with https:// or http://",
        ),
        ({"date": "2026-02-30"}, "date", "The issue: the issue date is not a real date"),
    ],
)
def test_a_draft_with_a_mistake_names_its_field_and_records_nothing(
    client: Any, service: Any, session: str, changes: dict[str, str], field: str, message: str
) -> None:
    start = _blank_form(client, session)
    for path, extra in ((COMPOSE, {"change": "preview"}), (RECORD, {"record": "test"})):
        page = press(client, session, start, path, **{**FILLED, **changes, **extra})
        assert page.status_code == 400, page.text
        assert f'id="{field}-error"' in page.text, page.text
        assert message in unescape(page.text)
        assert f'id="{field}"' in page.text and 'aria-invalid="true"' in page.text
    assert service.issues.list(10) == [] and _audited(service) == [("login", None)]


def test_a_test_issue_first_then_the_real_one_for_the_same_content(
    client: Any, service: Any, session: str, content: bool
) -> None:
    start = _blank_form(client, session)
    refused = press(client, session, start, RECORD, record="real", **FILLED)
    assert refused.status_code == 400
    assert "record a test issue of this content first" in refused.text
    tested = press(client, session, start, RECORD, record="test", **FILLED)
    assert tested.status_code == 200, tested.text
    [test_issue] = service.issues.list(10)
    assert test_issue.kind == "test" and test_issue.subject == "[TEST] Our spring issue"
    assert f"Recorded test issue {test_issue.id}" in unescape(tested.text)
    # A change after the test asks for a new test.
    changed = press(client, session, tested, RECORD, record="real", subject="Other subject")
    assert changed.status_code == 400 and "changed since the last test" in changed.text
    real = press(client, session, tested, RECORD, record="real")
    page = followed(client, real, session)
    assert flash_of(page).startswith("Recorded manual issue")
    issues = service.issues.list(10)
    assert [issue.kind for issue in issues] == ["manual", "test"]
    assert issues[0].sections == test_issue.sections
    # A topic keeps the plugin's slug; a new one gets one made from its name.
    slug = sample_issue_content()["topics"][0]["slug"] if content else "health-care"
    assert issues[0].sections["topics"][0]["slug"] == slug
    assert _audited(service)[:2] == [
        ("issue.record", f"manual issue {issues[0].id}"),
        ("issue.record", f"test issue {test_issue.id}"),
    ]


def test_blank_rows_are_dropped_not_refused(client: Any, service: Any, session: str) -> None:
    page = _blank_form(client, session)
    page = press(client, session, page, COMPOSE, change="add-otd", **FILLED)
    page = press(client, session, page, COMPOSE, change="add-item-0")
    press(client, session, page, RECORD, record="test")
    [issue] = service.issues.list(10)
    assert len(issue.sections["on_this_day"]) == 1
    assert len(issue.sections["topics"][0]["items"]) == 1


def test_the_issues_page_links_to_the_composer(client: Any, session: str) -> None:
    assert 'href="' in get_page(client, "/admin/issues", session).text
    assert "Write an issue" in get_page(client, "/admin/issues", session).text
