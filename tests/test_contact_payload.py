"""The contact serializer's hand-written parts stay in step with what they spell out."""

from __future__ import annotations

from datetime import datetime

from newsletter_connector import Settings
from newsletter_connector.model.contact import EMAIL_PREF_FIELDS, contact_payload
from newsletter_connector.storage import EmailPrefs, SubscriberData
from newsletter_connector.testing.conformance_subscribers import make_subscriber_data

AT = datetime(2026, 11, 21, 9, 30)


def record(**changes: object) -> SubscriberData:
    """A confirmed subscriber created at ``AT``, with ``changes``."""
    return make_subscriber_data(
        "reader@example.org", **{"status": "confirmed", "created_at": AT, **changes}
    )


SETTINGS = Settings(base_url="https://news.example/newsletter")


def test_contact_prefs_follow_the_fields() -> None:
    prefs = EmailPrefs(briefings="weekly", puzzles="off", on_this_day="daily", local="weekly")
    contact = contact_payload(record(prefs=prefs), SETTINGS)
    expected = {wire: getattr(prefs, attr) for wire, attr in EMAIL_PREF_FIELDS}
    assert list(contact["prefs"]["email"].items()) == list(expected.items())


def test_optional_timestamps_are_null_or_utc_with_z() -> None:
    empty = contact_payload(record(), SETTINGS)
    assert empty["profile_completed_at"] is None
    assert empty["confirmed_at"] is None
    assert empty["unsubscribed_at"] is None
    written = {
        "profile_completed_at": "2026-11-22T08:00:00.000250Z",
        "confirmed_at": "2026-11-22T08:00:01Z",
        "unsubscribed_at": "2026-11-22T08:00:02.500000Z",
    }
    full = contact_payload(
        record(**{name: datetime.fromisoformat(text[:-1]) for name, text in written.items()}),
        SETTINGS,
    )
    for name, text in written.items():
        assert full[name] == text
    assert full["created_at"] == "2026-11-21T09:30:00Z"
