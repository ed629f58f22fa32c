"""Bad content from a plugin or the caller fails the run, naming the field; nothing is stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from newsletter_connector.errors import InvalidRequest
from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.model.issue import content_problems, load_content, parse_content
from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.issue_samples import sample_issue_content


def _without(path: str) -> dict[str, Any]:
    content = sample_issue_content()
    node: Any = content
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    del node[parts[-1]]
    return content


def _with(path: str, value: Any) -> dict[str, Any]:
    content = sample_issue_content()
    node: Any = content
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    last = parts[-1]
    node[int(last) if last.isdigit() else last] = value
    return content


MISSING = [
    ("briefing", "sections.briefing"),
    ("on_this_day", "sections.on_this_day"),
    ("puzzle_hint", "sections.puzzle_hint"),
    ("topics", "sections.topics"),
    ("briefing.date", "sections.briefing.date"),
    ("briefing.title", "sections.briefing.title"),
    ("briefing.url", "sections.briefing.url"),
    ("on_this_day.0.year", "sections.on_this_day[0].year"),
    ("on_this_day.1.text", "sections.on_this_day[1].text"),
    ("on_this_day.0.url", "sections.on_this_day[0].url"),
    ("topics.0.slug", "sections.topics[0].slug"),
    ("topics.1.label", "sections.topics[1].label"),
    ("topics.0.summary", "sections.topics[0].summary"),
    ("topics.0.items", "sections.topics[0].items"),
    ("topics.0.items.1.title", "sections.topics[0].items[1].title"),
    ("topics.1.items.0.url", "sections.topics[1].items[0].url"),
    ("topics.0.items.0.source", "sections.topics[0].items[0].source"),
]


@pytest.mark.parametrize(("path", "field"), MISSING)
def test_missing_field_is_named(path: str, field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_content(_without(path))
    assert caught.value.field == field
    assert caught.value.message == f"issue content: {field} is required"


WRONG_TYPE = [
    ("briefing", "today", "sections.briefing", "must be an object"),
    ("briefing", ["x"], "sections.briefing", "must be an object"),
    ("on_this_day", {"year": 1}, "sections.on_this_day", "must be an array"),
    ("topics", "health", "sections.topics", "must be an array"),
    ("puzzle_hint", 7, "sections.puzzle_hint", "must be a string"),
    ("puzzle_hint", None, "sections.puzzle_hint", "must be a string"),
    ("on_this_day.0.year", "1969", "sections.on_this_day[0].year", "must be an integer"),
    ("on_this_day.0.year", True, "sections.on_this_day[0].year", "must be an integer"),
    ("on_this_day.0.year", 1969.5, "sections.on_this_day[0].year", "must be an integer"),
    ("on_this_day.0", "1969: Apollo", "sections.on_this_day[0]", "must be an object"),
    ("topics.0.items.0.title", 5, "sections.topics[0].items[0].title", "must be a string"),
    ("topics.0.items", {}, "sections.topics[0].items", "must be an array"),
    ("topics.1.summary", None, "sections.topics[1].summary", "must be a string"),
    ("briefing.url", None, "sections.briefing.url", "must be a string"),
    ("subject", 42, "subject", "must be a string"),
]


@pytest.mark.parametrize(("path", "value", "field", "problem"), WRONG_TYPE)
def test_wrong_type_is_named(path: str, value: Any, field: str, problem: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_content(_with(path, value))
    assert caught.value.field == field
    assert caught.value.message == f"issue content: {field} {problem}"


BAD_VALUES = [
    ("briefing.url", "javascript:alert(1)", "sections.briefing.url"),
    ("briefing.url", "/relative/path", "sections.briefing.url"),
    ("topics.0.items.0.url", "mailto:desk@example.org", "sections.topics[0].items[0].url"),
    ("topics.0.items.0.url", "https://", "sections.topics[0].items[0].url"),
    ("topics.0.items.0.url", "https://e.example/a b", "sections.topics[0].items[0].url"),
    ("on_this_day.1.url", "data:text/html,<b>x</b>", "sections.on_this_day[1].url"),
    ("on_this_day.1.url", "ftp://e.example/x", "sections.on_this_day[1].url"),
    ("briefing.date", "21/11/2026", "sections.briefing.date"),
    ("briefing.date", "2026-02-30", "sections.briefing.date"),
    ("briefing.title", "   ", "sections.briefing.title"),
    ("topics.0.slug", "Health Care", "sections.topics[0].slug"),
    ("topics.0.label", "", "sections.topics[0].label"),
    ("on_this_day.0.year", 123456, "sections.on_this_day[0].year"),
    ("subject", "", "subject"),
    ("subject", "x" * 501, "subject"),
]


MESSAGES = [
    (
        "on_this_day.0.year",
        123456,
        "sections.on_this_day[0].year must be less than or equal to 9999",
    ),
    ("subject", "x" * 501, "subject must have at most 500 characters"),
    ("subject", "Hi\r\nBcc: x@example.org", "subject must be one line without control characters"),
    (
        "briefing.url",
        "mailto:a@b.c",
        "sections.briefing.url must be an absolute http(s) URL of at most 2048 characters",
    ),
    ("topics.0.label", " ", "sections.topics[0].label must not be blank"),
]


@pytest.mark.parametrize(("path", "value", "message"), MESSAGES)
def test_messages_read_well(path: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_content(_with(path, value))
    assert caught.value.message == f"issue content: {message}"


@pytest.mark.parametrize(("path", "value", "field"), BAD_VALUES)
def test_bad_value_is_named(path: str, value: Any, field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_content(_with(path, value))
    assert caught.value.field == field
    assert caught.value.message.startswith(f"issue content: {field} ")


def test_unknown_field_is_named() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_content(_with("on_thisday", []))
    assert caught.value.field == "on_thisday"
    assert caught.value.message == (
        "issue content: on_thisday is not a known field "
        "(expected briefing, on_this_day, puzzle_hint, topics, subject)"
    )
    with pytest.raises(InvalidRequest) as caught:
        parse_content(_with("topics.0.items.0.image", "https://e.example/i.png"))
    assert caught.value.field == "sections.topics[0].items[0].image"


def test_repeated_topic_slug_is_named() -> None:
    content = sample_issue_content()
    content["topics"][1]["slug"] = "health"
    with pytest.raises(InvalidRequest) as caught:
        parse_content(content)
    assert caught.value.field == "sections.topics[1].slug"
    assert "sections.topics[0].slug" in caught.value.message


@pytest.mark.parametrize("content", [[], "text", 3])
def test_content_must_be_an_object(content: Any) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_content(content)
    assert caught.value.field == "content"


def test_every_problem_is_listed_with_its_place_and_code_the_first_as_the_api_says_it() -> None:
    content = sample_issue_content(subject="x" * 501)
    content["briefing"]["date"] = ""
    content["on_this_day"][0]["year"] = 123456
    content["topics"][0]["items"][0]["url"] = "news.example/flu"
    content["topics"][1]["items"][0]["url"] = "https://e.example/" + "a" * 2048
    content["topics"][1]["slug"] = content["topics"][0]["slug"]
    problems = content_problems(content)
    assert [(p.loc, p.code) for p in problems] == [
        (("briefing", "date"), "blank"),
        (("on_this_day", 0, "year"), "less_than_equal"),
        (("topics", 0, "items", 0, "url"), "url_scheme"),
        (("topics", 1, "items", 0, "url"), "url_too_long"),
        (("subject",), "too_long"),
        (("topics", 1, "slug"), "slug_repeat"),
    ]
    assert problems[3].figures["max_length"] == 2048 and problems[3].figures["length"] == 2066
    assert problems[4].figures == {"max_length": 500, "length": 501}
    assert problems[5].figures == {"first": 0}
    with pytest.raises(InvalidRequest) as caught:
        parse_content(content)
    assert (caught.value.field, caught.value.message) == (problems[0].field, problems[0].message)
    assert problems[0].message == (
        "issue content: sections.briefing.date must be a date in YYYY-MM-DD form"
    )


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("briefing.url", "", "blank"),
        ("briefing.url", "https://", "url_host"),
        ("briefing.url", "https://e.example/a b", "url_spaces"),
        ("briefing.url", "http://[::1", "url_malformed"),
        ("briefing.url", "ftp://e.example/x", "url_scheme"),
        ("briefing.date", "21/11/2026", "date_form"),
        ("briefing.date", "2026-02-30", "calendar_date"),
        ("briefing.title", " ", "blank"),
        ("briefing.title", "T\x00", "nul"),
        ("topics.0.slug", "Health Care", "slug"),
        ("subject", "Hi\nthere", "control"),
    ],
)
def test_each_problem_has_its_code(path: str, value: Any, code: str) -> None:
    [problem] = content_problems(_with(path, value))
    assert problem.code == code


def test_valid_content_has_no_problem() -> None:
    assert content_problems(sample_issue_content()) == []
    [problem] = content_problems([])
    assert (problem.loc, problem.field) == ((), "content")


def test_empty_lists_and_strings_are_allowed_where_documented() -> None:
    content = sample_issue_content(on_this_day=[], topics=[], puzzle_hint="")
    assert parse_content(content).sections()["topics"] == []
    content = sample_issue_content()
    content["topics"][0]["items"] = []
    content["topics"][0]["summary"] = ""
    content["topics"][0]["items"] = [{"title": "T", "url": "http://e.example/", "source": ""}]
    parsed = parse_content(content)
    assert parsed.sections()["topics"][0]["items"][0]["source"] == ""


def test_sections_keep_the_wire_shape() -> None:
    content = sample_issue_content(subject="Hello")
    sections = parse_content(content).sections()
    assert list(sections) == ["briefing", "on_this_day", "puzzle_hint", "topics"]
    del content["subject"]
    assert sections == content


# -- through the service: nothing half-built is stored ------------------------------------------


class BadContentPlugin:
    """A content plugin whose topic item lacks its url."""

    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        return _without("topics.0.items.0.url")


def _stored_counts(service: NewsletterService) -> tuple[int, int]:
    from sqlalchemy import func, select

    from newsletter_connector.plugins.sql_store.tables import issues, outbox_events

    with service.storage.transaction(write=False) as uow:
        connection = uow.connection  # type: ignore[attr-defined]
        return (
            connection.scalar(select(func.count()).select_from(issues)),
            connection.scalar(select(func.count()).select_from(outbox_events)),
        )


def test_bad_plugin_content_fails_the_run_and_stores_nothing(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service = NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, plugins=[BadContentPlugin()]
    )
    with pytest.raises(InvalidRequest) as caught:
        service.issues.run_digest("daily")
    assert caught.value.field == "sections.topics[0].items[0].url"
    assert _stored_counts(service) == (0, 0)


@pytest.mark.parametrize("kind", ["daily", "weekly", "manual", "test"])
def test_bad_explicit_content_stores_nothing(newsletter_service: Any, kind: str) -> None:
    with pytest.raises(InvalidRequest, match=r"sections\.briefing\.url"):
        newsletter_service.issues.run_digest(
            kind, "2026-11-21", _with("briefing.url", "javascript:x")
        )
    assert _stored_counts(newsletter_service) == (0, 0)


def test_load_content_reads_the_json_object() -> None:
    content = sample_issue_content(subject="Hello")
    assert load_content(json.dumps(content, indent=2)) == content


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "issue content is not valid JSON (line 1, column 2: "
            "Expecting property name enclosed in double quotes)",
        ),
        (
            '{\n  "puzzle_hint": ,\n}',
            "issue content is not valid JSON (line 2, column 18: Expecting value)",
        ),
        ("", "issue content is not valid JSON (line 1, column 1: Expecting value)"),
        ("[" * 100_000, "issue content is not valid JSON (nested too deeply)"),
        ("1" * 5000, "issue content is not valid JSON (a number too long to read)"),
        (
            "null",
            "issue content must be an object with briefing, on_this_day, puzzle_hint and topics",
        ),
        (
            "[]",
            "issue content must be an object with briefing, on_this_day, puzzle_hint and topics",
        ),
    ],
    ids=["syntax", "second-line", "empty", "deep", "long-number", "null", "array"],
)
def test_load_content_names_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        load_content(text)
    assert (caught.value.message, caught.value.field) == (message, "content")
