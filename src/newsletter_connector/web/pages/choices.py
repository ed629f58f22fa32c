"""Plain-language labels for the contact fields' values, in the order readers see them (a test
checks these tables name every value of the service's). Labels are marked for the catalogs and
translated where they are shown; the values stay as the API gives them."""

from __future__ import annotations

from dataclasses import dataclass

from ...i18n import N_

#: Cadence values with their labels ("off" reads as "Never").
CADENCES: tuple[tuple[str, str], ...] = (
    ("daily", N_("Daily")),
    ("weekly", N_("Weekly")),
    ("off", N_("Never")),
)

#: Signup asks only how often; the choice applies to every part of the newsletter.
SIGNUP_FREQUENCIES: tuple[tuple[str, str], ...] = (
    ("daily", N_("Daily (every morning)")),
    ("weekly", N_("Weekly (once a week)")),
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
        "briefings",
        "briefings",
        N_("News briefings"),
        N_("The main stories of the day, in a few lines."),
    ),
    Topic("puzzles", "puzzles", N_("Puzzles"), N_("A puzzle, and the answer to the last one.")),
    Topic(
        "onThisDay",
        "on_this_day",
        N_("On this day"),
        N_("What happened on this date in years gone by."),
    ),
    Topic("local", "local", N_("Local news"), N_("News near your ZIP code.")),
)

CATEGORIES: tuple[tuple[str, str], ...] = (
    ("health", N_("Health")),
    ("benefits", N_("Benefits and Social Security")),
    ("money", N_("Money")),
    ("housing", N_("Housing")),
    ("caregiving", N_("Caregiving")),
    ("technology", N_("Technology")),
    ("travel", N_("Travel")),
    ("food", N_("Food")),
)

#: The empty value means "prefer not to say" (stored as null).
AGE_RANGES: tuple[tuple[str, str], ...] = (
    ("under_55", N_("Under 55")),
    ("55_64", N_("55 to 64")),
    ("65_74", N_("65 to 74")),
    ("75_84", N_("75 to 84")),
    ("85_plus", N_("85 or over")),
    ("", N_("Prefer not to say")),
)

GENDERS: tuple[tuple[str, str], ...] = (
    ("woman", N_("Woman")),
    ("man", N_("Man")),
    ("non_binary", N_("Non-binary")),
    ("self_described", N_("I will describe myself")),
    ("", N_("Prefer not to say")),
)
