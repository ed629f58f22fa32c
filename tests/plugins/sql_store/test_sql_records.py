"""The SQL store's cheap record construction builds exactly what the records' ``__init__`` does."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import subscribers as sql_subscribers
from newsletter_connector.plugins.sql_store.record_builders import record_builder
from newsletter_connector.storage.records import AnalyticsEventRecord, EmailPrefs, SubscriberRecord

AT = datetime(2026, 11, 21, 9, 30, 0, 123456)


def _subscriber_values() -> dict[str, Any]:
    return {
        "email": "zoë@example.org",
        "first_name": "Zoë",
        "last_name": None,
        "zip": "02134",
        "phone": "+1 617 555 0100",
        "sms_enabled": True,
        "prefs": EmailPrefs(briefings="daily", puzzles="off", on_this_day="weekly", local="off"),
        "status": "pending",
        "age_range": "65_74",
        "gender": None,
        "gender_self": None,
        "categories": ("health", "money"),
        "consent_source": None,
        "consent_collected_at": None,
        "created_at": AT,
        "updated_at": AT.replace(microsecond=0),
        "confirmed_at": None,
        "unsubscribed_at": None,
        "bounced_at": None,
        "profile_completed_at": None,
        "confirm_token": "c" * 43,
        "unsubscribe_token": "u" * 43,
        "profile_token": "p" * 43,
        "id": 7,
    }


def test_builder_equals_init_and_stays_frozen() -> None:
    values = _subscriber_values()
    built = record_builder(SubscriberRecord)(tuple(values.values()))
    assert type(built) is SubscriberRecord
    assert built == SubscriberRecord(**values)
    assert repr(built) == repr(SubscriberRecord(**values))  # secrets stay out of repr
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.status = "confirmed"  # type: ignore[misc]

    event = (1, AT, "pageview", "visitor-1", "session-1", "/", "", {"a": 1.5}, None)
    assert record_builder(AnalyticsEventRecord)(event) == AnalyticsEventRecord(*event)


def test_builder_refuses_classes_whose_init_does_more() -> None:
    @dataclasses.dataclass(frozen=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            assert self.value >= 0

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        value: int

    @dataclasses.dataclass(frozen=True)
    class Derived:
        value: int
        double: int = dataclasses.field(init=False, default=0)

    for cls in (Checked, Slotted, Derived, dict):
        with pytest.raises(TypeError):
            record_builder(cls)


def test_subscriber_row_builds_the_constructed_record() -> None:
    values = _subscriber_values()
    prefs = values["prefs"]
    row = (
        values["id"], values["email"], values["first_name"], values["last_name"], values["zip"],
        values["phone"], 1, prefs.briefings, prefs.puzzles, prefs.on_this_day, prefs.local,
        values["status"], values["age_range"], values["gender"], values["gender_self"],
        '["health", "money"]', values["consent_source"], values["consent_collected_at"],
        values["created_at"], values["updated_at"], values["confirmed_at"],
        values["unsubscribed_at"], values["bounced_at"], values["profile_completed_at"],
        values["confirm_token"], values["unsubscribe_token"], values["profile_token"],
    )  # fmt: skip
    assert sql_subscribers._subscriber(row) == SubscriberRecord(**values)


@pytest.mark.parametrize(
    ("stored", "expected"),
    [(None, ()), ("null", ()), ("[]", ()), ('["food"]', ("food",)), ('["a","b"]', ("a", "b"))],
)
def test_categories_text_decodes_like_the_json_column(
    stored: str | None, expected: tuple[str, ...]
) -> None:
    assert sql_subscribers._categories(stored) == expected
