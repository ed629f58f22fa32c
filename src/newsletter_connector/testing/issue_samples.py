"""A complete, valid issue content (what a ``newsletter_issue_content`` plugin returns), for
tests, previews and the sample image in the docs."""

from __future__ import annotations

import copy
from typing import Any

_SAMPLE: dict[str, Any] = {
    "briefing": {
        "date": "2026-11-21",
        "title": "Medicare open enrollment ends December 7: what to check before you switch",
        "url": "https://news.example.org/briefing/2026-11-21",
    },
    "on_this_day": [
        {
            "year": 1969,
            "text": "Apollo 12 heads home after the second crewed landing on the Moon.",
            "url": "https://news.example.org/on-this-day/1969-apollo-12",
        },
        {
            "year": 1877,
            "text": "Thomas Edison announces his phonograph, a machine that records sound.",
            "url": "https://news.example.org/on-this-day/1877-phonograph",
        },
    ],
    "puzzle_hint": "Today's five-letter word starts with a vowel and rhymes with 'delight'.",
    "topics": [
        {
            "slug": "health",
            "label": "Health",
            "summary": "Flu season is early this year; pharmacies have the high-dose vaccine.",
            "items": [
                {
                    "title": "High-dose flu shots: who should get one",
                    "url": "https://news.example.org/health/high-dose-flu-shots",
                    "source": "Health desk",
                },
                {
                    "title": "Walking 20 minutes a day, and how to keep it up in winter",
                    "url": "https://news.example.org/health/winter-walking",
                    "source": "Associated Press",
                },
            ],
        },
        {
            "slug": "money",
            "label": "Money",
            "summary": "Social Security's cost-of-living adjustment arrives in January.",
            "items": [
                {
                    "title": "Your 2027 COLA, explained in five numbers",
                    "url": "https://news.example.org/money/cola-2027",
                    "source": "Money desk",
                }
            ],
        },
    ],
}


def sample_issue_content(**overrides: Any) -> dict[str, Any]:
    """A deep copy of the sample content, with top-level keys replaced by ``overrides``."""
    content = copy.deepcopy(_SAMPLE)
    content.update(overrides)
    return content
