"""The profile page: every contact field a reader may set; the first save completes the
profile; bad input comes back beside its field and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.pages_helpers import (
    checked,
    field_error,
    input_value,
    open_form,
    path_of,
    submitted_unchanged,
    text_of,
)
from tests.support.subscriber_helpers import events_of

FULL = [
    ("first_name", "  Ada "),
    ("last_name", "Lovelace"),
    ("zip", "02139"),
    ("cadence_briefings", "weekly"),
    ("cadence_puzzles", "off"),
    ("cadence_onThisDay", "daily"),
    ("cadence_local", "weekly"),
    ("categories", "money"),
    ("categories", "health"),
    ("age_range", "65_74"),
    ("gender", "self_described"),
    ("gender_self", "Grandmother"),
    ("sms", "yes"),
    ("phone", "+1 555 123 4567"),
]


@pytest.fixture
def contact(newsletter_service: Any) -> dict[str, Any]:
    record = newsletter_service.subscribers.subscribe(
        {"email": "me@example.org", "zip": "12345"}
    ).record
    record = newsletter_service.subscribers.confirm_by_token(record.confirm_token)
    return dict(newsletter_service.subscribers.contact(record))


def _contact(service: Any) -> dict[str, Any]:
    return dict(service.subscribers.contact(service.subscribers.get("me@example.org")))


def test_page_shows_the_current_choices(newsletter_client: Any, contact: dict[str, Any]) -> None:
    page = newsletter_client.simulate_get(path_of(contact["profile_url"]))
    assert page.status_code == 200
    html = page.text
    assert input_value(html, "zip") == "12345"
    assert input_value(html, "first_name") == ""
    assert checked(html, "cadence_briefings") == ["daily"]
    assert checked(html, "categories") == []
    assert checked(html, "age_range") == [""]  # prefer not to say
    assert checked(html, "sms") == []
    for name in ("first_name", "last_name", "zip", "phone", "gender_self", "sms"):
        assert f'<label for="{name}">' in html
    assert "Save my choices" in html


def test_first_save_completes_the_profile_and_every_save_queues_the_event(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    path = path_of(contact["profile_url"])
    form = open_form(newsletter_client, path)
    result = form.post(newsletter_client, path, FULL)
    assert result.status_code == 303
    assert result.headers["location"] == contact["profile_url"] + "?saved=1"
    saved = _contact(newsletter_service)
    assert saved["first_name"] == "Ada" and saved["last_name"] == "Lovelace"
    assert saved["zip"] == "02139"
    assert saved["prefs"] == {
        "email": {"briefings": "weekly", "puzzles": "off", "onThisDay": "daily", "local": "weekly"},
        "sms": {"enabled": True},
    }
    assert saved["phone"] == "+1 555 123 4567"
    assert saved["categories"] == ["health", "money"]
    assert (saved["age_range"], saved["gender"], saved["gender_self"]) == (
        "65_74",
        "self_described",
        "Grandmother",
    )
    completed = saved["profile_completed_at"]
    assert completed is not None
    assert len(events_of(newsletter_service, "newsletter.profile_completed")) == 1

    page = newsletter_client.simulate_get(path + "?saved=1")
    assert "Your choices are saved" in text_of(page.text)
    assert checked(page.text, "categories") == ["health", "money"]
    assert checked(page.text, "gender") == ["self_described"]
    assert checked(page.text, "sms") == ["yes"]

    # A second save clears what the reader emptied (the phone with its "remove" box);
    # completion time stays the first one.
    cleared = [(k, v) for k, v in FULL if k not in ("categories", "sms")]
    cleared = [(k, "" if k in ("first_name", "phone") else v) for k, v in cleared]
    cleared.append(("phone_clear", "yes"))
    again = form.post(newsletter_client, path, cleared)
    assert again.status_code == 303
    saved = _contact(newsletter_service)
    assert saved["first_name"] is None and "phone" not in saved
    assert saved["prefs"]["sms"] == {"enabled": False}
    assert saved["categories"] == []
    assert saved["profile_completed_at"] == completed
    assert len(events_of(newsletter_service, "newsletter.profile_completed")) == 2


def test_saved_note_only_after_a_save(newsletter_client: Any, contact: dict[str, Any]) -> None:
    page = newsletter_client.simulate_get(path_of(contact["profile_url"]) + "?saved=1")
    assert "Your choices are saved" not in text_of(page.text)


def _replace(fields: list[tuple[str, str]], **changes: str) -> list[tuple[str, str]]:
    out = [(k, changes.get(k, v)) for k, v in fields]
    return out + [(k, v) for k, v in changes.items() if k not in dict(fields)]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"zip": "1234"}, "zip", "exactly 5 digits"),
        ({"first_name": "x" * 201}, "first_name", "200 characters or fewer"),
        ({"last_name": "a\x01b"}, "last_name", "200 characters or fewer"),
        ({"phone": "call me"}, "phone", "at least 7 digits"),
        ({"phone": ""}, "sms", "enter your mobile phone number"),
        ({"gender": "woman"}, "gender_self", "choose “I will describe myself”"),
        ({"gender": "robot"}, "gender", "Prefer not to say"),
        ({"age_range": "120"}, "age_range", "Prefer not to say"),
        ({"cadence_local": "hourly"}, "cadence_local", "daily, weekly or never"),
    ],
)
def test_bad_input_is_shown_beside_its_field_and_changes_nothing(
    newsletter_client: Any,
    newsletter_service: Any,
    contact: dict[str, Any],
    changes: dict[str, str],
    field: str,
    message: str,
) -> None:
    before = _contact(newsletter_service)
    path = path_of(contact["profile_url"])
    form = open_form(newsletter_client, path)
    sent = _replace(FULL, **changes)
    result = form.post(newsletter_client, path, sent)
    assert result.status_code == 400
    assert message in (field_error(result.text, field) or ""), result.text
    assert f'href="#{field}"' in result.text
    typed = dict(sent)
    for name in ("first_name", "last_name", "zip", "phone", "gender_self"):
        assert input_value(result.text, name) == typed[name].strip()
    assert checked(result.text, "categories") == ["health", "money"]
    assert checked(result.text, "cadence_briefings") == ["weekly"]
    assert _contact(newsletter_service) == before
    assert events_of(newsletter_service, "newsletter.profile_completed") == []


def test_save_needs_a_valid_form_token(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    before = _contact(newsletter_service)
    path = path_of(contact["profile_url"])
    form = open_form(newsletter_client, path)
    stale = form.post(newsletter_client, path, FULL, with_token=False)
    assert stale.status_code == 400
    assert "has to be sent again" in text_of(stale.text)
    assert input_value(stale.text, "first_name") == "Ada"
    cross = form.post(newsletter_client, path, FULL, headers={"Origin": "https://x.example"})
    assert cross.status_code == 403
    assert _contact(newsletter_service) == before


@pytest.mark.parametrize(
    ("how", "note"),
    [
        ("pending", "not confirmed yet"),
        ("unsubscribed", "You are unsubscribed"),
        ("bounced", "could not be delivered"),
    ],
)
def test_page_says_when_the_newsletter_is_not_being_sent(
    newsletter_client: Any, newsletter_service: Any, how: str, note: str
) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "s@example.org"}).record
    if how == "unsubscribed":
        newsletter_service.subscribers.unsubscribe("s@example.org")
    elif how == "bounced":
        newsletter_service.subscribers.mark_bounced("s@example.org")
    url = newsletter_service.subscribers.contact(record)["profile_url"]
    page = newsletter_client.simulate_get(path_of(url))
    assert page.status_code == 200 and note in text_of(page.text)


def test_unknown_token_is_404(newsletter_client: Any, contact: dict[str, Any]) -> None:
    for method in ("GET", "POST"):
        result = newsletter_client.simulate_request(method, "/profile/" + "Z" * 32)
        assert result.status_code == 404
        assert "recognise this link" in text_of(result.text)


def test_a_nul_character_is_refused_not_a_server_error(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    before = _contact(newsletter_service)
    path = path_of(contact["profile_url"])
    form = open_form(newsletter_client, path)
    for name in ("first_name", "gender_self", "phone", "zip"):
        result = form.post(newsletter_client, path, _replace(FULL, **{name: "x\x00y"}))
        assert result.status_code == 400, name
        assert field_error(result.text, name), name
    assert _contact(newsletter_service) == before


PHONE = "+1 (555) 123-4567"


def _with_phone(service: Any) -> None:
    service.subscribers.update(
        "me@example.org", {"phone": PHONE, "prefs": {"sms": {"enabled": True}}}
    )


def _assert_phone_masked(html: str) -> None:
    digits = "".join(c for c in PHONE if c.isdigit())
    flat = "".join(c for c in html if c.isdigit() or c == "<")  # digits however separated
    assert PHONE not in html and "555" not in text_of(html)
    assert digits not in flat and digits[-7:] not in flat
    assert "•••• 4567" in text_of(html)


def test_the_stored_phone_is_never_shown_in_full(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    _with_phone(newsletter_service)
    path = path_of(contact["profile_url"])
    page = newsletter_client.simulate_get(path)
    _assert_phone_masked(page.text)
    assert input_value(page.text, "phone") == ""
    form = open_form(newsletter_client, path)
    bad_zip = [(k, "1" if k == "zip" else v) for k, v in submitted_unchanged(page.text)]
    rejected = form.post(newsletter_client, path, bad_zip)
    assert rejected.status_code == 400
    _assert_phone_masked(rejected.text)
    saved = newsletter_client.simulate_get(path + "?saved=1")
    _assert_phone_masked(saved.text)


def test_saving_the_form_unchanged_keeps_the_phone_and_the_reader_can_replace_or_clear_it(
    newsletter_client: Any, newsletter_service: Any, contact: dict[str, Any]
) -> None:
    _with_phone(newsletter_service)
    path = path_of(contact["profile_url"])
    form = open_form(newsletter_client, path)
    unchanged = submitted_unchanged(form.page.text)
    assert form.post(newsletter_client, path, unchanged).status_code == 303
    kept = _contact(newsletter_service)
    assert kept["phone"] == PHONE and kept["prefs"]["sms"] == {"enabled": True}

    replaced = [(k, "217 555 0100" if k == "phone" else v) for k, v in unchanged]
    assert form.post(newsletter_client, path, replaced).status_code == 303
    assert _contact(newsletter_service)["phone"] == "217 555 0100"
    assert "•••• 0100" in text_of(newsletter_client.simulate_get(path).text)

    cleared = [(k, v) for k, v in unchanged if k != "sms"] + [("phone_clear", "yes")]
    assert form.post(newsletter_client, path, cleared).status_code == 303
    after = _contact(newsletter_service)
    assert "phone" not in after and after["prefs"]["sms"] == {"enabled": False}
    assert "phone_clear" not in newsletter_client.simulate_get(path).text
