"""Sample subscribers for the conformance suites and tests."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from ..storage.records import EmailPrefs, SubscriberData

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456)


def make_subscriber_data(email: str, **overrides: Any) -> SubscriberData:
    """A complete, valid new subscriber for ``email`` (lowercase), with fresh link tokens."""
    values: dict[str, Any] = {
        "email": email,
        "first_name": None,
        "last_name": None,
        "zip": None,
        "phone": None,
        "sms_enabled": False,
        "prefs": EmailPrefs(briefings="daily", puzzles="off", on_this_day="weekly", local="off"),
        "status": "pending",
        "age_range": None,
        "gender": None,
        "gender_self": None,
        "categories": (),
        "consent_source": None,
        "consent_collected_at": None,
        "created_at": T0,
        "updated_at": T0,
        "confirmed_at": None,
        "unsubscribed_at": None,
        "bounced_at": None,
        "profile_completed_at": None,
        "confirm_token": secrets.token_urlsafe(24),
        "unsubscribe_token": secrets.token_urlsafe(24),
        "profile_token": secrets.token_urlsafe(24),
    }
    values.update(overrides)
    return SubscriberData(**values)
