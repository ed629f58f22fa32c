"""The contact serializer's hand-written parts stay in step with what they spell out."""

from __future__ import annotations

from datetime import datetime

from newsletter_connector import Settings
from newsletter_connector.model.contact import EMAIL_PREF_FIELDS, contact_payload
from newsletter_connector.storage import EmailPrefs, SubscriberRecord

AT = datetime(2026, 11, 21, 9, 30)


def record(**changes: object) -> SubscriberRecord:
    values: dict[str, object] = {
        "id": 1,
        "email": "reader@example.org",
        "first_name": None,
        "last_name": None,
        "zip": None,
        "phone": None,
        "sms_enabled": False,
        "prefs": EmailPrefs(briefings="daily", puzzles="weekly", on_this_day="off", local="daily"),
        "status": "confirmed",
        "age_range": None,
        "gender": None,
        "gender_self": None,
        "categories": (),
        "consent_source": None,
        "consent_collected_at": None,
        "created_at": AT,
        "updated_at": AT,
        "confirmed_at": None,
        "unsubscribed_at": None,
        "bounced_at": None,
        "profile_completed_at": None,
        "confirm_token": "c",
        "unsubscribe_token": "u",
        "profile_token": "p",
    }
    values.update(changes)
    return SubscriberRecord(**values)  # type: ignore[arg-type]


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
    later = datetime(2026, 11, 22, 8, 0, 0, 250)
    full = contact_payload(
        record(profile_completed_at=later, confirmed_at=later, unsubscribed_at=later), SETTINGS
    )
    for name in ("profile_completed_at", "confirmed_at", "unsubscribed_at"):
        assert full[name] == "2026-11-22T08:00:00.000250Z"
    assert full["created_at"] == "2026-11-21T09:30:00Z"
