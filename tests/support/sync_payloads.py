"""Event payloads built by hand from the shapes the docs state
(docs/newsletter-api.md, docs/issues.md, docs/export.md)."""

from __future__ import annotations

from typing import Any

BASE = "https://news.example.test/newsletter"


def contact(
    email: str = "reader@example.org", status: str = "confirmed", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "email": email,
        "first_name": "Ada",
        "last_name": None,
        "zip": "02134",
        "prefs": {
            "email": {
                "briefings": "daily",
                "puzzles": "weekly",
                "onThisDay": "off",
                "local": "daily",
            },
            "sms": {"enabled": False},
        },
        "status": status,
        "age_range": "65_74",
        "gender": None,
        "gender_self": None,
        "categories": ["health", "money"],
        "profile_completed_at": None,
        "created_at": "2026-11-20T09:00:00Z",
        "confirmed_at": "2026-11-20T09:05:00Z" if status == "confirmed" else None,
        "unsubscribed_at": "2026-11-20T10:00:00Z" if status == "unsubscribed" else None,
        "unsubscribe_url": f"{BASE}/unsubscribe/tok-u",
        "profile_url": f"{BASE}/profile/tok-p",
    }
    if status == "pending":
        body["confirm_url"] = f"{BASE}/confirm/tok-c"
    body.update(extra)
    return body


def issue() -> dict[str, Any]:
    return {
        "kind": "daily",
        "cadence": "daily",
        "date": "2026-11-20",
        "subject": "Your Friday briefing",
        "site_url": "https://news.example.test",
        "postal_address": "1 Test Street, Testville, TS 00000",
        "sections": {
            "briefing": {"date": "2026-11-20", "title": "Briefing", "url": "https://n.test/b"},
            "on_this_day": [{"year": 1969, "text": "Moon", "url": "https://n.test/o"}],
            "puzzle_hint": "Think small",
            "topics": [],
        },
        "html": "<p>Hello</p><a href='{{unsubscribe_url}}'>unsubscribe</a>",
    }


def message() -> dict[str, Any]:
    return {
        "id": "17",
        "email": "visitor@example.org",
        "name": "Vi Sitor",
        "message": "Please cover the bus routes.",
        "submitted_at": "2026-11-20T11:00:00Z",
    }


def rollup() -> dict[str, Any]:
    return {
        "date": "2026-11-19",
        "source": "news.example.test",
        "pageviews": 120,
        "unique_visitors": 40,
        "new_visitors": 12,
        "sessions": 55,
        "issue_number": 301,
        "top_pages": [{"path": "/", "views": 60}],
    }
