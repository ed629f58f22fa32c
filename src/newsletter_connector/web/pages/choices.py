"""Plain-language labels for the contact fields' values, in the order readers see them (a test
checks these tables name every value of the service's)."""

from __future__ import annotations

from dataclasses import dataclass

#: Cadence values with their labels ("off" reads as "Never").
CADENCES: tuple[tuple[str, str], ...] = (
    ("daily", "Daily"),
    ("weekly", "Weekly"),
    ("off", "Never"),
)

#: Signup asks only how often; the choice applies to every part of the newsletter.
SIGNUP_FREQUENCIES: tuple[tuple[str, str], ...] = (
    ("daily", "Daily (every morning)"),
    ("weekly", "Weekly (once a week)"),
)


@dataclass(frozen=True)
class Topic:
    """One part of the newsletter whose cadence a reader sets: ``prefs.email.<wire>`` on the
    wire, ``record.prefs.<attr>`` in storage."""

    wire: str
    attr: str
    label: str
    hint: str

    @property
    def field(self) -> str:
        """The form field holding this topic's cadence."""
        return f"cadence_{self.wire}"


TOPICS: tuple[Topic, ...] = (
    Topic(
        "briefings", "briefings", "News briefings", "The main stories of the day, in a few lines."
    ),
    Topic("puzzles", "puzzles", "Puzzles", "A puzzle, and the answer to the last one."),
    Topic(
        "onThisDay", "on_this_day", "On this day", "What happened on this date in years gone by."
    ),
    Topic("local", "local", "Local news", "News near your ZIP code."),
)

CATEGORIES: tuple[tuple[str, str], ...] = (
    ("health", "Health"),
    ("benefits", "Benefits and Social Security"),
    ("money", "Money"),
    ("housing", "Housing"),
    ("caregiving", "Caregiving"),
    ("technology", "Technology"),
    ("travel", "Travel"),
    ("food", "Food"),
)

#: The empty value means "prefer not to say" (stored as null).
AGE_RANGES: tuple[tuple[str, str], ...] = (
    ("under_55", "Under 55"),
    ("55_64", "55 to 64"),
    ("65_74", "65 to 74"),
    ("75_84", "75 to 84"),
    ("85_plus", "85 or over"),
    ("", "Prefer not to say"),
)

GENDERS: tuple[tuple[str, str], ...] = (
    ("woman", "Woman"),
    ("man", "Man"),
    ("non_binary", "Non-binary"),
    ("self_described", "I will describe myself"),
    ("", "Prefer not to say"),
)
