"""The issue composer's form as a draft: every section a group of fields, each list (on this
day entries, topics, a topic's stories) numbered rows that buttons add and remove without a
script, and the draft as the content a digest run takes.

Field names: ``subject``; ``briefing_title``, ``briefing_url``, ``briefing_date``;
``otd-N-year``, ``otd-N-text``, ``otd-N-url``; ``puzzle_hint``; ``topic-N-label``,
``topic-N-summary``, ``topic-N-slug`` (kept from the content plugin, else made from the label);
``topic-N-item-M-title``, ``-url``, ``-source``; and the row counts ``otd_rows``,
``topic_rows``, ``topic-N-items``. A row left wholly blank is dropped, not refused. Each field's
name is also its id on the page, which the problems of :mod:`.issue_problems` link to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..pages.forms import FormData
from ..params import decimal_integer
from .issue_problems import FieldProblem, year_words

#: The most rows of each kind a draft holds (a form is bounded like any body).
MAX_OTD_ROWS = 30
#: The most digits an on-this-day year has.
MAX_YEAR_DIGITS = 4
MAX_TOPIC_ROWS = 20
MAX_ITEM_ROWS = 30
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass
class TopicRows:
    """One topic of the draft: its fields and its stories' rows."""

    label: str = ""
    summary: str = ""
    slug: str = ""
    items: list[dict[str, str]] = field(default_factory=list)


@dataclass
class IssueDraft:
    """What the composer's form holds (all text, as typed)."""

    kind: str = "test"
    date: str = ""
    subject: str = ""
    briefing: dict[str, str] = field(default_factory=lambda: {"title": "", "url": "", "date": ""})
    on_this_day: list[dict[str, str]] = field(default_factory=list)
    puzzle_hint: str = ""
    topics: list[TopicRows] = field(default_factory=list)

    @classmethod
    def from_form(cls, form: FormData) -> IssueDraft:
        """The draft the form's fields hold (row counts bounded)."""
        draft = cls(
            kind=form.get("kind").strip() or "test",
            date=form.get("date").strip(),
            subject=form.get("subject"),
            briefing={name: form.get(f"briefing_{name}") for name in ("title", "url", "date")},
            puzzle_hint=form.get("puzzle_hint"),
        )
        for n in range(_rows(form, "otd_rows", MAX_OTD_ROWS)):
            draft.on_this_day.append(
                {name: form.get(f"otd-{n}-{name}") for name in ("year", "text", "url")}
            )
        for n in range(_rows(form, "topic_rows", MAX_TOPIC_ROWS)):
            topic = TopicRows(
                label=form.get(f"topic-{n}-label"),
                summary=form.get(f"topic-{n}-summary"),
                slug=form.get(f"topic-{n}-slug"),
            )
            for m in range(_rows(form, f"topic-{n}-items", MAX_ITEM_ROWS)):
                topic.items.append(
                    {
                        name: form.get(f"topic-{n}-item-{m}-{name}")
                        for name in ("title", "url", "source")
                    }
                )
            draft.topics.append(topic)
        return draft

    @classmethod
    def from_content(cls, kind: str, date: str, content: Mapping[str, Any]) -> IssueDraft:
        """A draft starting from a content plugin's content (values it lacks left blank)."""
        briefing = content.get("briefing") or {}
        draft = cls(
            kind=kind,
            date=date,
            subject=str(content.get("subject") or ""),
            briefing={name: str(briefing.get(name) or "") for name in ("title", "url", "date")},
            puzzle_hint=str(content.get("puzzle_hint") or ""),
        )
        for entry in list(content.get("on_this_day") or [])[:MAX_OTD_ROWS]:
            draft.on_this_day.append(
                {name: str(entry.get(name, "")) for name in ("year", "text", "url")}
            )
        for topic in list(content.get("topics") or [])[:MAX_TOPIC_ROWS]:
            draft.topics.append(
                TopicRows(
                    label=str(topic.get("label") or ""),
                    summary=str(topic.get("summary") or ""),
                    slug=str(topic.get("slug") or ""),
                    items=[
                        {name: str(item.get(name) or "") for name in ("title", "url", "source")}
                        for item in list(topic.get("items") or [])[:MAX_ITEM_ROWS]
                    ],
                )
            )
        return draft

    def change(self, what: str) -> None:
        """Apply a row button: ``add-otd``, ``remove-otd-N``, ``add-topic``,
        ``remove-topic-N``, ``add-item-N`` or ``remove-item-N-M`` (anything else: nothing;
        ``N`` and ``M`` are read as :func:`decimal_integer` reads a number, so a row that is
        not there, or a number in other digits than 0-9, changes nothing)."""
        parts = what.split("-")
        numbers = [n for n in map(decimal_integer, parts[2:]) if n is not None]
        action = "-".join(parts[:2])
        if action == "add-otd" and len(self.on_this_day) < MAX_OTD_ROWS:
            self.on_this_day.append({"year": "", "text": "", "url": ""})
        elif action == "add-topic" and len(self.topics) < MAX_TOPIC_ROWS:
            self.topics.append(TopicRows(items=[{"title": "", "url": "", "source": ""}]))
        elif action == "remove-otd" and numbers and numbers[0] < len(self.on_this_day):
            del self.on_this_day[numbers[0]]
        elif action == "remove-topic" and numbers and numbers[0] < len(self.topics):
            del self.topics[numbers[0]]
        elif action in ("add-item", "remove-item") and numbers and numbers[0] < len(self.topics):
            items = self.topics[numbers[0]].items
            if action == "add-item" and len(items) < MAX_ITEM_ROWS:
                items.append({"title": "", "url": "", "source": ""})
            elif action == "remove-item" and len(numbers) == 2 and numbers[1] < len(items):
                del items[numbers[1]]

    def content(self) -> tuple[dict[str, Any], list[FieldProblem]]:
        """The content a digest run takes, and what in the form (of the kept rows, renumbered
        as the content numbers them) could not become content: a year that is not a whole
        number of at most :data:`MAX_YEAR_DIGITS` digits 0-9 (an optional ``-`` first)."""
        problems: list[FieldProblem] = []
        entries: list[dict[str, Any]] = []
        for entry in _kept(self.on_this_day):
            year = entry["year"].strip()
            number = decimal_integer(year)
            if number is None or len(year.lstrip("-")) > MAX_YEAR_DIGITS:
                problems.append(year_words(len(entries)))
                number = 0
            entries.append({"year": number, "text": entry["text"], "url": entry["url"].strip()})
        topics: list[dict[str, Any]] = []
        slugs: set[str] = set()
        for topic in self.topics:
            items = [
                {"title": item["title"], "url": item["url"].strip(), "source": item["source"]}
                for item in _kept(topic.items)
            ]
            if not (topic.label.strip() or topic.summary.strip() or items):
                continue
            slug = _unique(topic.slug.strip() or _slug(topic.label, len(topics)), slugs)
            topics.append(
                {"slug": slug, "label": topic.label, "summary": topic.summary, "items": items}
            )
        content: dict[str, Any] = {
            "briefing": {
                "date": self.briefing["date"].strip(),
                "title": self.briefing["title"],
                "url": self.briefing["url"].strip(),
            },
            "on_this_day": entries,
            "puzzle_hint": self.puzzle_hint,
            "topics": topics,
        }
        if self.subject.strip():
            content["subject"] = self.subject.strip()
        return content, problems

    def kept(self) -> IssueDraft:
        """The draft as :meth:`content` numbers it: wholly blank rows and topics dropped, so a
        problem's field names the row the editor sees."""
        return IssueDraft(
            kind=self.kind,
            date=self.date,
            subject=self.subject,
            briefing=dict(self.briefing),
            on_this_day=_kept(self.on_this_day),
            puzzle_hint=self.puzzle_hint,
            topics=[
                TopicRows(t.label, t.summary, t.slug, _kept(t.items))
                for t in self.topics
                if t.label.strip() or t.summary.strip() or _kept(t.items)
            ],
        )


def _rows(form: FormData, name: str, most: int) -> int:
    """The row count ``name``, at most ``most``; 0 when it is not a number as
    :func:`decimal_integer` reads one (digits 0-9 only, not too many), or below 0."""
    count = decimal_integer(form.get(name).strip())
    return max(0, min(count, most)) if count is not None else 0


def _kept(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [dict(row) for row in rows if any(value.strip() for value in row.values())]


def _slug(label: str, index: int) -> str:
    return _NOT_SLUG.sub("-", label.lower()).strip("-")[:60] or f"topic-{index + 1}"


def _unique(slug: str, taken: set[str]) -> str:
    candidate, n = slug, 2
    while candidate in taken:
        candidate = f"{slug[:58]}-{n}"
        n += 1
    taken.add(candidate)
    return candidate
