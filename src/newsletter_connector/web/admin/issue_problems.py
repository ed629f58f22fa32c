"""The issue composer's problems in words: each says where, as the page names the place ("Topic
1, story 1"), and what to do, in the editor's terms ("the link must start with https:// or
http://"), never a content path or the API's sentence.

:func:`content_words` words a problem of :func:`~newsletter_connector.model.issue.content_problems`
(its ``loc`` and ``code``) for the form field holding it; :func:`year_words`,
:func:`issue_date_words` and :func:`kind_words` word the form's own checks; :func:`refusal_words`
words a run the service refused; :func:`control_character_words` words the admin door's
refusal of a composer field. :func:`json_place` names a place of a JSON content as the
issues page's "Content (JSON)" box holds it (``topics[0].items[1].url``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import DbUnavailable, InvalidRequest, NewsletterError
from ...model.issue import ContentProblem
from ...service.issues import IssueAlreadyRecorded

#: Each section's form field for a content key (``briefing.url`` -> ``briefing_url``).
_BRIEFING = {"title": "briefing_title", "url": "briefing_url", "date": "briefing_date"}
#: The words a field goes by, as its label on the page says it.
_NOUNS = {
    "kind": "the kind of the real issue",
    "date": "the issue date",
    "subject": "the subject",
    "briefing_title": "the title",
    "briefing_url": "the link",
    "briefing_date": "the date of the story",
    "puzzle_hint": "the puzzle hint",
    "year": "the year",
    "text": "“What happened”",
    "url": "the link",
    "label": "the name of the topic",
    "summary": "the line about it",
    "title": "the story title",
    "source": "the source",
}
#: A code of :class:`ContentProblem` -> what is wrong, ``{noun}`` the field's words.
_SAYINGS = {
    "blank": "{noun} is required",
    "nul": "{noun} holds an invisible character that cannot be kept; type it again rather "
    "than pasting it",
    "control": "{noun} must be one line, without invisible characters such as tabs",
    "too_long": "{noun} is too long: at most {max_length:,} characters, and it has {length:,}",
    "url_too_long": "{noun} is too long: at most {max_length:,} characters, and it has {length:,}",
    "url_spaces": "{noun} must not contain spaces or line breaks",
    "url_scheme": "{noun} must start with https:// or http://",
    "url_host": "{noun} must name a site after https://, as in https://example.org/story",
    "url_malformed": "{noun} is not a web address that can be read; copy it again from the "
    "browser's address bar",
    "date_form": "{noun} must be a date such as 2026-11-21 (year, month, day)",
    "calendar_date": "{noun} is not a real date: check the day and the month",
    "greater_than_equal": "{noun} must be {ge} or later",
    "less_than_equal": "{noun} must be {le} or earlier",
    "whole_number": "{noun} must be a whole number of at most four digits, such as 1969",
    "slug": "the content plugin gave this topic a short name for links that cannot be used; "
    "remove the topic and add it again",
    "slug_repeat": "another topic has the same short name for links; remove this topic and "
    "add it again",
    "missing": "{noun} is missing",
    "extra_forbidden": "this is not a part an issue has",
    "string_type": "{noun} must be text in quotes",
    "int_type": "{noun} must be a whole number",
    "list_type": "{noun} must be a list, in [ ]",
    "model_type": "{noun} must be an object, in {{ }}",
    "model_attributes_type": "{noun} must be an object, in {{ }}",
    "dict_type": "{noun} must be an object, in {{ }}",
}
_CANNOT_USE = "{noun} cannot be used as it is"
#: What the kind list on the page offers for the real issue.
_REAL_KINDS_WORDS = "Daily, Weekly or Manual"


@dataclass(frozen=True)
class FieldProblem:
    """One problem as the composer shows it: ``field`` is the id of the form field it is about
    (the summary links to it, the field is described by it), ``None`` when it is about the
    whole issue; ``words`` names the place and says what is wrong."""

    field: str | None
    words: str


class DraftRefused(InvalidRequest):
    """A draft the composer will not preview or record; ``problems`` lists every reason (the
    message is the first one's words)."""

    def __init__(self, problems: list[FieldProblem]) -> None:
        super().__init__(problems[0].words, field=problems[0].field)
        self.problems = problems


#: The fields of the page outside its rows, in the page's order.
_TOP_FIELDS = ("kind", "date", "subject", "briefing_title", "briefing_url", "briefing_date")
#: The fields of each kind of row, in the page's order.
_OTD_FIELDS = ("year", "text", "url")
_TOPIC_FIELDS = ("label", "summary")
_ITEM_FIELDS = ("title", "url", "source")


def page_order(field: str | None) -> tuple[int, ...]:
    """Where ``field`` stands on the page, to list problems top to bottom (the record
    button's and then the whole issue's last)."""
    if field in _TOP_FIELDS:
        return (0, _TOP_FIELDS.index(field))
    if field == "puzzle_hint":
        return (2,)
    parts = (field or "").split("-")
    numbers = tuple(int(part) for part in parts if part.isdigit())
    if parts[0] == "otd" and len(numbers) == 1 and parts[-1] in _OTD_FIELDS:
        return (1, numbers[0], _OTD_FIELDS.index(parts[-1]))
    if parts[0] == "topic" and len(numbers) == 1 and parts[-1] in _TOPIC_FIELDS:
        return (3, numbers[0], 0, _TOPIC_FIELDS.index(parts[-1]))
    if parts[0] == "topic" and len(numbers) == 2 and parts[-1] in _ITEM_FIELDS:
        return (3, numbers[0], 1, numbers[1], _ITEM_FIELDS.index(parts[-1]))
    return (4 if field else 5,)


def form_field(loc: tuple[int | str, ...]) -> str | None:
    """The composer's form field holding a content place (``("topics", 1, "items", 0,
    "url")`` -> ``topic-1-item-0-url``; a topic's slug -> its name's field), ``None`` for a
    place the form has no field for."""
    match loc:
        case ("subject",) | ("puzzle_hint",):
            return str(loc[0])
        case ("briefing", str(name)) if name in _BRIEFING:
            return _BRIEFING[name]
        case ("on_this_day", int(n), "year" | "text" | "url"):
            return f"otd-{n}-{loc[2]}"
        case ("topics", int(n), "slug" | "label"):
            return f"topic-{n}-label"
        case ("topics", int(n), "summary"):
            return f"topic-{n}-summary"
        case ("topics", int(n), "items", int(m), "title" | "url" | "source"):
            return f"topic-{n}-item-{m}-{loc[4]}"
    return None


def place(loc: tuple[int | str, ...]) -> str:
    """A content place as the composer's page names it: ``The issue``, ``Briefing``, ``Puzzle``,
    ``On this day, entry 2``, ``Topic 1``, ``Topic 1, story 2``."""
    match loc:
        case ("briefing", *_):
            return "Briefing"
        case ("puzzle_hint",):
            return "Puzzle"
        case ("on_this_day", int(n), *_):
            return f"On this day, entry {n + 1}"
        case ("topics", int(n), "items", int(m), *_):
            return f"Topic {n + 1}, story {m + 1}"
        case ("topics", int(n), *_):
            return f"Topic {n + 1}"
    return "The issue"


def field_words(name: str) -> str | None:
    """A form field of the composer by its place and label (``topic-0-item-1-title`` ->
    ``Topic 1, story 2: the story title``); ``None`` for a name that is not one of its fields
    an editor types in."""
    if name in ("kind", "date"):
        return f"The issue: {_NOUNS[name]}"
    loc = _content_place(name)
    if loc is None or form_field(loc) != name:
        return None
    return f"{place(loc)}: {_noun(loc)}"


def control_character_words(name: str) -> str | None:
    """The composer's form refused at the admin door (:mod:`.input`) for a control character
    in its field ``name``, in words; ``None`` for a name that is not one of its fields."""
    where = field_words(name)
    if where is None:
        return None
    return (
        f"{where} holds an invisible character, such as a tab, that cannot be kept (it often "
        "comes along with copied text). Nothing was recorded: go back, type it again and "
        "send the form once more."
    )


def content_words(problem: ContentProblem) -> FieldProblem:
    """``problem`` in words, for the form field holding it."""
    saying = _said(_SAYINGS.get(problem.code, _CANNOT_USE), problem.loc, problem.figures)
    return FieldProblem(form_field(problem.loc), f"{place(problem.loc)}: {saying}")


def year_words(entry: int) -> FieldProblem:
    """The year of on-this-day entry ``entry`` (from 0) is not a whole number."""
    loc = ("on_this_day", entry, "year")
    return FieldProblem(form_field(loc), f"{place(loc)}: {_said(_SAYINGS['whole_number'], loc)}")


def issue_date_words(code: str) -> FieldProblem:
    """The issue date is not a date (``date_form``) or no such day (``calendar_date``)."""
    saying = _SAYINGS.get(code, _CANNOT_USE).format(noun=_NOUNS["date"])
    return FieldProblem("date", f"The issue: {saying}")


def kind_words() -> FieldProblem:
    """The kind of the real issue is not one the page offers."""
    return FieldProblem(
        "kind", f"The issue: choose the kind of the real issue: {_REAL_KINDS_WORDS}"
    )


def refusal_words(problem: NewsletterError) -> FieldProblem:
    """A run the service refused after the form's own checks passed: the issue already
    recorded for its day or week, a date or kind it would not take, the site's issue
    template failing, the database not answering; anything else as the whole issue's."""
    if isinstance(problem, IssueAlreadyRecorded) and problem.existing is not None:
        existing = problem.existing
        period = "week" if existing.kind == "weekly" else "day"
        return FieldProblem(
            "date",
            f"The issue: the {existing.kind} issue for the {period} of {existing.issue_date} "
            f"is already recorded (issue {existing.id}); choose another issue date, or Manual "
            "as the kind for an extra edition",
        )
    field = problem.field if isinstance(problem, InvalidRequest) else None
    if field == "date":
        return FieldProblem(
            "date",
            "The issue: an issue of this kind is already recorded for this date, or the date "
            "cannot be used; choose another issue date, or Manual as the kind",
        )
    if field == "kind":
        return kind_words()
    if isinstance(problem, DbUnavailable):
        return FieldProblem(
            None, "The issue: the database did not answer; please try again in a moment"
        )
    return FieldProblem(
        None,
        "The issue: the site's issue template could not make this issue. Please tell the "
        f"site's developers what it said: {problem.message}",
    )


def json_words(problem: ContentProblem) -> str:
    """``problem`` of a content typed as JSON, in words that also say where it is in the JSON:
    ``Topic 1, story 1 (topics[0].items[0].url in the JSON): the link must start with
    https:// or http://``."""
    saying = _said(_SAYINGS.get(problem.code, _CANNOT_USE), problem.loc, problem.figures)
    return f"{place(problem.loc)} ({json_place(problem.loc)} in the JSON): {saying}"


def json_place(loc: tuple[int | str, ...]) -> str:
    """A content place as the "Content (JSON)" box holds it: ``topics[0].items[1].url``,
    ``briefing.date``; ``the whole content`` for ``()``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path or "the whole content"


def _content_place(name: str) -> tuple[int | str, ...] | None:
    parts = name.split("-")
    if name in ("subject", "puzzle_hint"):
        return (name,)
    if name.startswith("briefing_"):
        return ("briefing", name.removeprefix("briefing_"))
    if len(parts) not in (3, 5) or not all(part.isdigit() for part in parts[1:-1:2]):
        return None
    if parts[0] == "otd" and len(parts) == 3:
        return ("on_this_day", int(parts[1]), parts[2])
    if parts[0] == "topic" and len(parts) == 3:
        return ("topics", int(parts[1]), parts[2])
    if parts[0] == "topic" and parts[2] == "item":
        return ("topics", int(parts[1]), "items", int(parts[3]), parts[4])
    return None


def _noun(loc: tuple[int | str, ...]) -> str:
    if not loc:
        return "the content"
    key = str(loc[-1])
    return _NOUNS.get(form_field(loc) or "", _NOUNS.get(key, "this part"))


def _said(saying: str, loc: tuple[int | str, ...], figures: Mapping[str, Any] | None = None) -> str:
    noun = _noun(loc)
    try:
        return saying.format(noun=noun, **(figures or {}))
    except (KeyError, ValueError):  # a figure the saying needs is missing
        return _CANNOT_USE.format(noun=noun)
