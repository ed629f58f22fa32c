"""Admin → Issues → Write an issue, as an editor, over HTTP: a draft with several problems
shows every one at once, in words naming the place as the page names it, beside its field
(``aria-describedby``, ``aria-invalid``) and listed at the top with a link to the field; no
content path, API sentence or pydantic wording reaches the page; nothing is recorded, queued
or audited. Required fields are marked."""

from __future__ import annotations

from datetime import datetime
from html.parser import HTMLParser
from typing import Any

import pytest

from newsletter_connector.descriptors import EDITOR
from newsletter_connector.service import NewsletterService
from newsletter_connector.web.admin.gate import COOKIE_NAME
from tests.support.admin import PASSWORD, audit_acts, get_page, post_form
from tests.web.admin.test_admin_issue_composer import fields_of

T0 = datetime(2026, 3, 1, 12, 0, 0)
COMPOSE = "/admin/issues/compose"
RECORD = "/admin/issues/compose/record"
#: Text of the content model and the API that must never reach the composer's page.
NOT_WORDS = (
    "sections.",
    "[0]",
    "[1]",
    "issue content:",
    "must be an absolute http(s) URL",
    "must not be blank",
    "Input should",
    "String should",
    "Value error",
    "YYYY-MM-DD form",
)


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, clock=lambda: T0
    )


@pytest.fixture
def admin_user(service: Any) -> str:
    """An editor: the composer is theirs."""
    service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
    return "eve"


class _Page(HTMLParser):
    """The page's elements by id (their attributes and text) and the summary's links."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, dict[str, str | None]] = {}
        self.text: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self.summary: list[tuple[str, str]] = []
        self._open: list[tuple[str, str | None]] = []  # (tag, id or None)
        self._label: str | None = None
        self._link: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        ident = found.get("id")
        if ident:
            self.attrs[ident] = found
            self.text[ident] = ""
        if tag == "label":
            self._label = found.get("for")
            self.labels[self._label or ""] = ""
        if tag == "a" and any(i == "problems" for _, i in self._open):
            self._link = (found.get("href") or "").removeprefix("#")
            self.summary.append((self._link, ""))
        if tag not in ("input", "br", "meta", "link"):
            self._open.append((tag, ident))

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self._label = None
        if tag == "a":
            self._link = None
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data: str) -> None:
        for _, ident in self._open:
            if ident:
                self.text[ident] += data
        if self._label is not None:
            self.labels[self._label] += data
        if self._link is not None:
            link, words = self.summary[-1]
            self.summary[-1] = (link, words + data)


def _read(page: Any) -> _Page:
    parsed = _Page()
    parsed.feed(page.text)
    return parsed


def _draft(client: Any, session: str) -> dict[str, str]:
    """The composer's own fields (its CSRF token included), filled in as an editor would, with
    two topics of two stories each: nothing wrong with it."""
    fields = fields_of(get_page(client, COMPOSE, session))
    story = {"title": "A story", "url": "https://news.example/story", "source": "Desk"}
    fields.update(
        kind="manual",
        date="",
        subject="Our spring issue",
        briefing_title="Clinics open late",
        briefing_url="https://news.example/clinics",
        briefing_date="2026-03-01",
        otd_rows="1",
        puzzle_hint="Think of spring.",
        topic_rows="2",
        **{
            "otd-0-year": "1969",
            "otd-0-text": "A walk on the moon",
            "otd-0-url": "https://news.example/moon",
            "topic-0-label": "Health",
            "topic-0-summary": "What changed",
            "topic-0-items": "2",
            "topic-1-label": "Money",
            "topic-1-summary": "",
            "topic-1-items": "2",
        },
    )
    for n in range(2):
        for m in range(2):
            for name, value in story.items():
                fields[f"topic-{n}-item-{m}-{name}"] = (
                    f"{value}-{n}-{m}" if name != "url" else (f"{value}/{n}/{m}")
                )
    return fields


#: Several problems at once: bad links in topic 1 story 1 and topic 2 story 2, a required
#: field left empty, an over-long subject and a year that is no number; each with the words
#: the page must show beside its field.
MISTAKES = {
    "subject": "x" * 501,
    "briefing_title": "  ",
    "otd-0-year": "nineteen",
    "topic-0-item-0-url": "news.example/flu",
    "topic-1-item-1-url": "ftp://bank.example/rates",
}
WORDS = {
    "subject": "The issue: the subject is too long: at most 500 characters, and it has 501",
    "briefing_title": "Briefing: the title is required",
    "otd-0-year": "On this day, entry 1: the year must be a whole number of at most four "
    "digits, such as 1969",
    "topic-0-item-0-url": "Topic 1, story 1: the link must start with https:// or http://",
    "topic-1-item-1-url": "Topic 2, story 2: the link must start with https:// or http://",
}


def _nothing_done(service: Any) -> Any:
    status = service.admin.outbox_status()
    return (service.issues.list(10), audit_acts(service), status.unbatched, status.batches)


def _post(client: Any, session: str, path: str, fields: dict[str, str]) -> Any:
    return post_form(client, path, fields, cookies={COOKIE_NAME: session})


def _assert_every_problem_beside_its_field(page: Any, words: dict[str, str]) -> None:
    assert page.status_code == 400, page.text
    shown = _read(page)
    for field, said in words.items():
        assert shown.text[f"{field}-error"] == said, shown.text.get(f"{field}-error")
        control = shown.attrs[field]
        assert control.get("aria-invalid") == "true", control
        assert f"{field}-error" in (control.get("aria-describedby") or "").split(), control
    # The summary at the top: every problem, top to bottom, each a link to its field.
    assert shown.summary == list(words.items())
    assert f"{len(words)} things need changing" in shown.text["problems"]
    for text in NOT_WORDS:
        assert text not in page.text, text


@pytest.mark.parametrize(
    ("path", "button"),
    [(COMPOSE, {"change": "preview"}), (RECORD, {"record": "test"}), (RECORD, {"record": "real"})],
    ids=["preview", "record-test", "record-real"],
)
def test_every_problem_of_a_draft_is_shown_at_once_in_words_beside_its_field(
    client: Any, service: Any, session: str, path: str, button: dict[str, str]
) -> None:
    before = _nothing_done(service)
    fields = {**_draft(client, session), **MISTAKES, **button}
    page = _post(client, session, path, fields)
    _assert_every_problem_beside_its_field(page, WORDS)
    assert fields_of(page)["topic-1-item-1-url"] == "ftp://bank.example/rates"  # kept as typed
    assert fields_of(page)["subject"] == "x" * 501
    assert _nothing_done(service) == before


def test_each_kind_of_mistake_is_said_in_words(client: Any, service: Any, session: str) -> None:
    fields = {
        **_draft(client, session),
        "change": "preview",
        "date": "2026-02-30",
        "briefing_url": "",
        "briefing_date": "21/11/2026",
        "otd-0-text": " ",
        "otd-0-url": "https://",
        "topic-0-label": "",
        "topic-0-item-1-title": "",
        "topic-0-item-1-url": "https://news.example/" + "a" * 2048,
        "topic-1-item-0-url": "https://news.example/a story",
    }
    page = _post(client, session, COMPOSE, fields)
    _assert_every_problem_beside_its_field(
        page,
        {
            "date": "The issue: the issue date is not a real date: check the day and the month",
            "briefing_url": "Briefing: the link is required",
            "briefing_date": "Briefing: the date of the story must be a date such as "
            "2026-11-21 (year, month, day)",
            "otd-0-text": "On this day, entry 1: “What happened” is required",
            "otd-0-url": "On this day, entry 1: the link must name a site after https://, as in "
            "https://example.org/story",
            "topic-0-label": "Topic 1: the name of the topic is required",
            "topic-0-item-1-title": "Topic 1, story 2: the story title is required",
            "topic-0-item-1-url": "Topic 1, story 2: the link is too long: at most 2,048 "
            "characters, and it has 2,069",
            "topic-1-item-0-url": "Topic 2, story 1: the link must not contain spaces or line "
            "breaks",
        },
    )
    assert service.issues.list(10) == []


def test_the_real_issue_without_a_test_is_refused_in_words_beside_the_button(
    client: Any, service: Any, session: str
) -> None:
    page = _post(client, session, RECORD, {**_draft(client, session), "record": "real"})
    assert page.status_code == 400, page.text
    shown = _read(page)
    said = shown.text["record-error"]
    assert said.startswith("Record the issue: record a test issue of this content first")
    assert "record-error" in (shown.attrs["record"].get("aria-describedby") or "")
    assert shown.summary == [("record", said)]
    assert service.issues.list(10) == []


def test_an_issue_already_recorded_for_its_day_is_said_in_words(
    client: Any, service: Any, session: str
) -> None:
    fields = {**_draft(client, session), "kind": "daily", "date": "2026-03-01"}
    tested = _post(client, session, RECORD, {**fields, "record": "test"})
    assert tested.status_code == 200, tested.text
    seal = fields_of(tested)["seal"]
    first = _post(client, session, RECORD, {**fields, "seal": seal, "record": "real"})
    assert first.status_code == 303, first.text
    before = _nothing_done(service)
    again = _post(client, session, RECORD, {**fields, "seal": seal, "record": "real"})
    assert again.status_code == 400, again.text
    [daily] = [issue for issue in service.issues.list(10) if issue.kind == "daily"]
    assert _read(again).text["date-error"] == (
        f"The issue: the daily issue for the day of 2026-03-01 is already recorded (issue "
        f"{daily.id}); choose another issue date, or Manual as the kind for an extra edition"
    )
    assert "nothing was recorded (use kind manual" not in again.text  # the API's sentence
    assert _nothing_done(service) == before


def test_required_fields_are_marked_in_words_and_those_always_required_for_the_browser(
    client: Any, session: str
) -> None:
    page = get_page(client, COMPOSE, session)
    shown = _read(page)
    for field in ("briefing_title", "briefing_url", "briefing_date"):
        assert shown.labels[field].endswith("(required)"), shown.labels[field]
        assert "required" in shown.attrs[field]
    # In a row, a field is required only if the row is used: marked in words only.
    for field in ("otd-0-year", "otd-0-text", "otd-0-url", "topic-0-label"):
        assert shown.labels[field].endswith("(required)") and "required" not in shown.attrs[field]
    for field in ("topic-0-item-0-title", "topic-0-item-0-url"):
        assert shown.labels[field].endswith("(required)") and "required" not in shown.attrs[field]
    for field in ("subject", "date", "topic-0-summary", "topic-0-item-0-source"):
        assert "(required)" not in shown.labels[field] and "required" not in shown.attrs[field]
    assert "in each entry, topic or story you use" in shown.text["required-note"]
    # The page, not the browser, checks the draft: every problem at once, row buttons free.
    assert 'class="composer" novalidate' in page.text


def test_an_unfinished_draft_still_takes_a_row_button(
    client: Any, service: Any, session: str
) -> None:
    fields = {**_draft(client, session), "briefing_title": "", "change": "add-topic"}
    page = _post(client, session, COMPOSE, fields)
    assert page.status_code == 200, page.text
    assert fields_of(page)["topic_rows"] == "3"
    assert 'aria-invalid="true"' not in page.text and 'id="problems"' not in page.text


def test_a_control_character_in_a_composer_field_is_refused_in_words(
    client: Any, service: Any, session: str
) -> None:
    before = _nothing_done(service)
    fields = {**_draft(client, session), "topic-0-item-1-title": "Flu\tshots", "record": "test"}
    page = _post(client, session, RECORD, fields)
    assert page.status_code == 400, page.text
    assert "Topic 1, story 2: the story title holds an invisible character" in page.text
    assert "topic-0-item-1-title" not in page.text
    assert _nothing_done(service) == before


def test_the_puzzle_hint_may_run_over_several_lines(
    client: Any, service: Any, session: str
) -> None:
    fields = {**_draft(client, session), "puzzle_hint": "Think of spring.\r\nThen of rain."}
    page = _post(client, session, RECORD, {**fields, "record": "test"})
    assert page.status_code == 200, page.text
    [issue] = service.issues.list(10)
    assert issue.sections["puzzle_hint"] == "Think of spring.\r\nThen of rain."
