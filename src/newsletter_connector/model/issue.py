"""The issue: reading a digest run's content from JSON text (:func:`load_content`), its strict
validation (:func:`parse_content`, the first problem as the API says it; :func:`content_problems`,
every problem with its place and a stable code), and the issue object's single serializer
(:func:`issue_object`; docs/issues.md, "Reading issues") for the API and the
``newsletter.issue`` event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date as Date
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from ..errors import InvalidRequest
from ..storage.records import IssueRecord

MAX_URL_LENGTH = 2048
MAX_SUBJECT_LENGTH = 500
SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_DATE_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SECTION_KEYS = ("briefing", "on_this_day", "puzzle_hint", "topics")
_NOT_AN_OBJECT = (
    "issue content must be an object with briefing, on_this_day, puzzle_hint and topics"
)


def is_http_url(value: str) -> bool:
    """Whether ``value`` is an absolute ``http://`` or ``https://`` URL with a host and no
    whitespace or control characters (the only links an issue may carry)."""
    from urllib.parse import urlsplit

    if not value or len(value) > MAX_URL_LENGTH:
        return False
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def parse_date(value: str) -> Date:
    """A ``YYYY-MM-DD`` calendar date; :class:`ValueError` for anything else."""
    if not _DATE_PATTERN.match(value):
        raise ValueError("must be a date in YYYY-MM-DD form")
    try:
        return Date.fromisoformat(value)
    except ValueError:
        raise ValueError("must be a real calendar date (YYYY-MM-DD)") from None


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def long_date(day: Date) -> str:
    """``Saturday, November 21, 2026`` (English, whatever the process locale)."""
    return f"{_WEEKDAYS[day.weekday()]}, {_MONTHS[day.month - 1]} {day.day}, {day.year}"


def _http_url(value: str) -> str:
    if is_http_url(value):
        return value
    context = {"max_length": MAX_URL_LENGTH, "length": len(value)}
    raise PydanticCustomError(_url_code(value), _URL_MESSAGE, context)


_URL_MESSAGE = "must be an absolute http(s) URL of at most {max_length} characters"


def _url_code(value: str) -> str:
    """Why ``value`` is not a link :func:`is_http_url` accepts (a code of
    :class:`ContentProblem`)."""
    from urllib.parse import urlsplit

    if not value.strip():
        return "blank"
    if len(value) > MAX_URL_LENGTH:
        return "url_too_long"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        return "url_spaces"
    try:
        parts = urlsplit(value)
    except ValueError:
        return "url_malformed"
    return "url_host" if parts.scheme.lower() in ("http", "https") else "url_scheme"


def date_code(value: str) -> str | None:
    """Why ``value`` is not a ``YYYY-MM-DD`` calendar date, as a code of
    :class:`ContentProblem` (``blank``, ``date_form``, ``calendar_date``); ``None`` when it is
    one."""
    try:
        parse_date(value)
    except ValueError:
        if not value.strip():
            return "blank"
        return "calendar_date" if _DATE_PATTERN.match(value) else "date_form"
    return None


def _iso_date(value: str) -> str:
    code = date_code(value)
    if code is not None:
        message = "must be a real calendar date (YYYY-MM-DD)"
        if code != "calendar_date":
            message = "must be a date in YYYY-MM-DD form"
        raise PydanticCustomError(code, message)
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be blank")
    return value


def _no_nul(value: str) -> str:
    # Stored in the issue's text and HTML, which PostgreSQL cannot hold with a NUL.
    if "\x00" in value:
        raise PydanticCustomError("nul", "must not contain NUL characters")
    return value


def _subject(value: str) -> str:
    if len(value) > MAX_SUBJECT_LENGTH:
        raise PydanticCustomError(
            "too_long",
            "must have at most {max_length} characters",
            {"max_length": MAX_SUBJECT_LENGTH, "length": len(value)},
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise PydanticCustomError("control", "must be one line without control characters")
    return value


def _slug(value: str) -> str:
    if not SLUG_PATTERN.match(value):
        raise PydanticCustomError(
            "slug", "must be 1-64 characters of a-z, 0-9, '-' or '_', starting alphanumeric"
        )
    return value


Url = Annotated[StrictStr, AfterValidator(_http_url)]
IsoDate = Annotated[StrictStr, AfterValidator(_iso_date)]
PlainText = Annotated[StrictStr, AfterValidator(_no_nul)]
Text = Annotated[StrictStr, AfterValidator(_no_nul), AfterValidator(_not_blank)]
Slug = Annotated[StrictStr, AfterValidator(_slug)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Briefing(_Strict):
    """``sections.briefing``: the day's lead story."""

    date: IsoDate
    title: Text
    url: Url


class OnThisDay(_Strict):
    """One ``sections.on_this_day`` entry."""

    year: Annotated[StrictInt, Field(ge=-9999, le=9999)]
    text: Text
    url: Url


class TopicItem(_Strict):
    """One story of a topic."""

    title: Text
    url: Url
    source: PlainText


class Topic(_Strict):
    """One ``sections.topics`` entry; slugs are unique within an issue."""

    slug: Slug
    label: Text
    summary: PlainText
    items: list[TopicItem]


class IssueContent(_Strict):
    """What a content plugin (or a ``--content`` file) supplies: the four sections, flat, and
    optionally the subject. No section may be missing; empty arrays and strings are allowed."""

    briefing: Briefing
    on_this_day: list[OnThisDay]
    puzzle_hint: PlainText
    topics: list[Topic]
    subject: Annotated[Text, AfterValidator(_subject)] | None = None

    def sections(self) -> dict[str, Any]:
        """The ``sections`` object of the issue, as JSON-ready data (wire key order)."""
        data = self.model_dump(mode="json", include=set(_SECTION_KEYS))
        return {key: data[key] for key in _SECTION_KEYS}


@dataclass(frozen=True)
class ContentProblem:
    """One thing wrong with an issue's content.

    - ``loc``: where, as the content's keys and list indexes (``("topics", 0, "items", 1,
      "url")``; ``()`` for the content as a whole).
    - ``code``: what, stable for callers that word it their own way: ``blank``, ``nul``,
      ``control``, ``too_long`` (``figures`` ``max_length`` and ``length``), ``url_too_long``
      (the same figures), ``url_spaces``, ``url_scheme`` (not ``http``/``https``), ``url_host``
      (no host), ``url_malformed``, ``date_form`` (not ``YYYY-MM-DD``), ``calendar_date`` (no
      such day), ``slug``, ``slug_repeat`` (``figures`` ``first``: the index of the topic
      holding it first), or pydantic's own type (``missing``, ``extra_forbidden``,
      ``string_type``, ``int_type``, ``greater_than_equal`` with ``ge``, ``less_than_equal``
      with ``le``, ...).
    - ``field`` and ``message``: the wire path and the sentence the API says it with
      (``sections.topics[0].items[1].url``, ``issue content: sections.topics[0]... must be
      ...``).
    """

    loc: tuple[int | str, ...]
    code: str
    field: str
    message: str
    figures: Mapping[str, Any]


def _repeated_slugs(content: Mapping[str, Any]) -> list[ContentProblem]:
    topics = content.get("topics")
    if not isinstance(topics, list):
        return []
    problems: list[ContentProblem] = []
    seen: dict[str, int] = {}
    for index, topic in enumerate(topics):
        slug = topic.get("slug") if isinstance(topic, Mapping) else None
        if not isinstance(slug, str):
            continue
        if slug in seen:
            path = f"sections.topics[{index}].slug"
            message = (
                f"issue content: {path} {slug!r} repeats "
                f"sections.topics[{seen[slug]}].slug; topic slugs must be unique"
            )
            loc = ("topics", index, "slug")
            first = {"first": seen[slug]}
            problems.append(ContentProblem(loc, "slug_repeat", path, message, first))
        else:
            seen[slug] = index
    return problems


_PROBLEMS = {
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "list_type": "must be an array",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
}


def field_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic location as the wire path of the issue field (``sections.topics[0].url``)."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    if loc and loc[0] in _SECTION_KEYS:
        path = "sections." + path
    return path or "content"


def _problem(error: ErrorDetails) -> ContentProblem:
    loc = tuple(error["loc"])
    field = field_path(loc)
    figures = dict(error.get("ctx") or {})
    if error["type"] == "extra_forbidden" and len(loc) == 1:
        known = ", ".join((*_SECTION_KEYS, "subject"))
        message = f"issue content: {field} is not a known field (expected {known})"
        return ContentProblem(loc, error["type"], field, message, figures)
    problem = _PROBLEMS.get(error["type"])
    if problem is None:
        problem = str(error["msg"]).removeprefix("Value error, ")
        # pydantic's "Input should be ..." / "String should have ..." in our voice.
        problem = re.sub(r"^(Input|String|Value) should( be)?", r"must\2", problem)
    return ContentProblem(loc, error["type"], field, f"issue content: {field} {problem}", figures)


def _checked(content: Any) -> tuple[IssueContent | None, list[ContentProblem]]:
    if not isinstance(content, Mapping):
        return None, [ContentProblem((), "model_type", "content", _NOT_AN_OBJECT, {})]
    try:
        parsed = IssueContent.model_validate(dict(content))
    except ValidationError as exc:
        problems = [_problem(error) for error in exc.errors()]
        return None, problems + _repeated_slugs(content)
    return parsed, _repeated_slugs(content)


def content_problems(content: Any) -> list[ContentProblem]:
    """Every problem :func:`parse_content` finds in ``content``, in its order (empty: the
    content is valid); the first is the one :func:`parse_content` raises."""
    return _checked(content)[1]


def parse_content(content: Any) -> IssueContent:
    """Validate a digest run's content (exact types, no unknown keys, absolute http(s) links,
    unique topic slugs).

    :raises InvalidRequest: naming the first bad field (``sections.topics[1].items[0].url``)
        and saying what is wrong with it; ``content`` when it is not an object.
    """
    parsed, problems = _checked(content)
    if problems:
        raise InvalidRequest(problems[0].message, field=problems[0].field)
    assert parsed is not None  # no problem means it parsed
    return parsed


def load_content(text: str) -> dict[str, Any]:
    """A digest run's content given as JSON text (``digest --content FILE``, the admin page's
    "Content (JSON)" field): the JSON object, still to be checked by :func:`parse_content`.

    :raises InvalidRequest: naming ``content``: not JSON (the message gives the line and
        column), nested too deeply or a number too long to read, or JSON but not an object
        (``null`` never means "ask the content plugin").
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRequest(
            f"issue content is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            field="content",
        ) from None
    except RecursionError:
        raise InvalidRequest(
            "issue content is not valid JSON (nested too deeply)", field="content"
        ) from None
    except ValueError:  # an integer of more digits than Python converts
        raise InvalidRequest(
            "issue content is not valid JSON (a number too long to read)", field="content"
        ) from None
    if not isinstance(value, dict):
        raise InvalidRequest(_NOT_AN_OBJECT, field="content")
    return value


def issue_object(
    record: IssueRecord, *, include_id: bool = True, include_html: bool
) -> dict[str, Any]:
    """The issue object (docs/issues.md, "Reading issues") of a stored issue; ``html`` and ``text``
    (``null`` when the renderer gives none) only with ``include_html``."""
    data: dict[str, Any] = {}
    if include_id:
        data["id"] = str(record.id)
    data.update(
        kind=record.kind,
        cadence=record.cadence,
        date=record.issue_date,
        subject=record.subject,
        site_url=record.site_url,
        postal_address=record.postal_address,
        sections=record.sections,
    )
    if include_html:
        if record.html is None:
            raise ValueError("issue was loaded without its bodies")
        data["html"] = record.html
        data["text"] = record.text
    return data
