"""One subscriber's admin page over HTTP: the contact in words (never JSON, never a link token
or the whole phone number), the edit form saving as ``PATCH /subscribers/{email}`` does (text
messages stopped freely, started only with where the reader agreed), a rejected edit shown
again with nothing changed, the confirmation resent under the resend interval's rule, the
events about the reader with what became of them, and the admin acts on the address."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from newsletter_connector.descriptors import EDITOR
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.storage.records import EmailPrefs
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.admin import (
    COOKIE_NAME,
    PASSWORD,
    audit_acts,
    flash_of,
    followed,
    get_page,
    post_form,
    sign_in,
    submit,
)

PAGE = "/admin/subscribers/show?email=ann%40example.org"
EDIT = "/admin/subscribers/edit"
RESEND = "/admin/subscribers/resend-confirmation"
#: The edit form as the page sends it for Ann, unchanged.
UNCHANGED = {
    "email": "ann@example.org",
    "first_name": "Ann",
    "last_name": "Lee",
    "zip": "62701",
    "cadence_briefings": "daily",
    "cadence_puzzles": "off",
    "cadence_onThisDay": "weekly",
    "cadence_local": "off",
    "categories": ["health"],
    "age_range": "65_74",
    "gender": "",
    "gender_self": "",
    "sms": "",
}

#: An edit changing most of the form.
CHANGES: dict[str, Any] = {
    "first_name": "Annie",
    "zip": "",
    "cadence_puzzles": "weekly",
    "categories": ["money", "travel"],
    "age_range": "75_84",
    "gender": "self_described",
    "gender_self": "Lady",
}


def _ann(service: Any, **fields: Any) -> Any:
    values = {
        "first_name": "Ann",
        "last_name": "Lee",
        "zip": "62701",
        "categories": ("health",),
        "age_range": "65_74",
        "phone": "+1 555 123 4567",
        **fields,
    }
    with service.storage.transaction() as uow:
        return uow.subscribers.add(make_subscriber_data("ann@example.org", **values))


def _edit(client: Any, session: str, **changes: Any) -> Any:
    return submit(client, EDIT, session, {**UNCHANGED, **changes}, form=PAGE)


def _events(service: Any) -> list[str]:
    """The types of the events about Ann, oldest first."""
    key = subscriber_key(service.context, "ann@example.org")
    with service.storage.transaction(write=False) as uow:
        return [event.event_type for event in reversed(uow.outbox.events_about(key, limit=100))]


def test_the_contact_is_shown_in_words_without_tokens_json_or_the_whole_phone(
    client: Any, service: Any, admin_user: str
) -> None:
    record = _ann(
        service, first_name="<Ann>", status="confirmed", confirmed_at=service.context.clock()
    )
    page = get_page(client, "/admin/subscribers/show?email=Ann%40Example.org", sign_in(client))
    assert page.status_code == 200
    text = page.text
    assert "Confirmed since 2026" in text
    assert "<dt>Name</dt><dd>&lt;Ann&gt; Lee</dd>" in text and "<Ann>" not in text
    assert "<dt>Topics</dt><dd>Health</dd>" in text
    assert "<dt>Age</dt><dd>65 to 74</dd>" in text
    assert "<dt>Puzzles</dt><dd>Off</dd>" in text and "<dt>On this day</dt><dd>Weekly</dd>" in text
    assert "<dt>Phone</dt><dd>•••• 4567</dd>" in text and "555 123" not in text
    for token in (record.confirm_token, record.unsubscribe_token, record.profile_token):
        assert token not in text
    assert "<pre" not in text and '"email":' not in text
    assert "Resend the confirmation email" not in text  # confirmed: nothing to resend


def test_an_edit_saves_as_the_api_does_and_is_audited_once(
    client: Any, service: Any, admin_user: str
) -> None:
    _ann(service)
    session = sign_in(client)
    result = _edit(client, session, **CHANGES)
    assert result.status_code == 303
    assert result.headers["location"] == BASE + PAGE
    assert flash_of(followed(client, result, session)) == "Details saved."
    record = service.subscribers.get("ann@example.org")
    assert (record.first_name, record.last_name, record.zip) == ("Annie", "Lee", None)
    assert record.prefs == EmailPrefs(
        briefings="daily", puzzles="weekly", on_this_day="weekly", local="off"
    )
    assert record.categories == ("money", "travel")
    assert (record.age_range, record.gender, record.gender_self) == (
        "75_84",
        "self_described",
        "Lady",
    )
    assert record.phone == "+1 555 123 4567"  # the form has no phone field: kept
    assert audit_acts(service)[0] == ("subscriber.edit", "ann@example.org")
    again = _edit(client, session, **CHANGES)
    assert flash_of(followed(client, again, session)) == "Nothing changed."


@pytest.mark.parametrize("role", ["owner", "editor"])
@pytest.mark.parametrize(
    "phone_fields", [{"phone": "+1 555 000 0000"}, {"phone": "", "phone_clear": "yes"}]
)
def test_a_crafted_edit_form_neither_changes_nor_clears_the_phone_number(
    client: Any, service: Any, admin_user: str, role: str, phone_fields: dict[str, str]
) -> None:
    """The page offers no phone field; a form posted with one (a new number, or the reader
    page's "remove" box) saves the rest and keeps the number as stored."""
    _ann(service)
    username = admin_user
    if role == "editor":
        service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
        username = "eve"
    session = sign_in(client, username)
    result = _edit(client, session, first_name="Annie", **phone_fields)
    assert result.status_code == 303
    record = service.subscribers.get("ann@example.org")
    assert record.first_name == "Annie" and record.phone == "+1 555 123 4567"


def test_a_rejected_edit_shows_the_form_again_and_changes_nothing(
    client: Any, service: Any, admin_user: str
) -> None:
    before = _ann(service)
    session = sign_in(client)
    result = _edit(client, session, first_name="Annie", zip="123")
    assert result.status_code == 400
    assert 'id="zip-error"' in result.text and 'aria-invalid="true"' in result.text
    assert 'value="Annie"' in result.text and 'value="123"' in result.text
    assert "Nothing was saved" in result.text
    assert service.subscribers.get("ann@example.org") == before
    assert [act for act, _ in audit_acts(service)] == ["login"]


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"zip": "123"}, "zip", "The ZIP code must be exactly 5 digits"),
        ({"first_name": "x" * 300}, "first_name", "The first name must be at most 200 characters"),
        (
            {"cadence_briefings": "hourly"},
            "cadence_briefings",
            "How often they get News briefings must be one of the choices in the list",
        ),
        ({"age_range": "old"}, "age_range", "The age range must be one of the choices in the list"),
    ],
)
def test_a_refused_edit_says_why_in_words_naming_the_field_as_the_page_does(
    client: Any, service: Any, admin_user: str, changes: dict[str, str], field: str, words: str
) -> None:
    _ann(service)
    result = _edit(client, sign_in(client), **changes)
    assert result.status_code == 400, result.text
    assert f'<span class="field-error" id="{field}-error">{words}</span>' in result.text
    for wire in ("zip must", "first_name must", "prefs.email", "age_range must", "under_55,"):
        assert wire not in result.text, wire


def test_text_messages_start_only_with_where_the_reader_agreed_audited_beside_the_act(
    client: Any, service: Any, admin_user: str
) -> None:
    _ann(service)
    session = sign_in(client)
    page = get_page(client, PAGE, session)
    assert "Where and when the reader agreed to text messages" in page.text
    refused = _edit(client, session, sms="yes", first_name="Annie")
    assert refused.status_code == 400
    assert 'id="sms_consent-error"' in refused.text and 'value="Annie"' in refused.text
    assert service.subscribers.get("ann@example.org").first_name == "Ann"
    too_long = _edit(client, session, sms="yes", sms_consent="x" * 301)
    assert too_long.status_code == 400 and "300 characters or fewer" in too_long.text

    agreed = _edit(client, session, sms="yes", sms_consent="  said yes   on the phone, 27 Nov ")
    assert agreed.status_code == 303
    assert service.subscribers.get("ann@example.org").sms_enabled is True
    [act] = [a for a in service.admin_audit.latest(5) if a.action == "subscriber.edit"]
    assert act.detail == "text messages turned on; consent: said yes on the phone, 27 Nov"
    assert "said yes on the phone, 27 Nov" in get_page(client, PAGE, session).text
    assert "said yes on the phone" in get_page(client, "/admin/audit", session).text

    assert _edit(client, session, sms="").status_code == 303  # stopping needs no reason
    assert service.subscribers.get("ann@example.org").sms_enabled is False
    service.subscribers.erase("ann@example.org")
    assert all(a.detail is None for a in service.admin_audit.latest(10))  # forgotten too


def test_a_reader_without_a_mobile_number_cannot_be_given_text_messages(
    client: Any, service: Any, admin_user: str
) -> None:
    _ann(service, phone=None)
    session = sign_in(client)
    page = get_page(client, PAGE, session)
    assert "No mobile number is stored" in page.text and 'name="sms" value="yes"' not in page.text
    forged = _edit(client, session, sms="yes", sms_consent="by phone")
    assert forged.status_code == 400 and 'id="sms-error"' in forged.text
    assert service.subscribers.get("ann@example.org").sms_enabled is False


def test_resend_queues_one_signup_event_per_interval_and_only_for_the_pending(
    client: Any, service: Any, admin_user: str, now: list[Any]
) -> None:
    service.subscribers.subscribe({"email": "ann@example.org"})
    session = sign_in(client)
    assert "Resend the confirmation email" in get_page(client, PAGE, session).text

    first = submit(client, RESEND, session, {"email": "ann@example.org"}, form=PAGE)
    assert "less than 1 day ago" in flash_of(followed(client, first, session))
    assert _events(service) == ["newsletter.signup"]  # the signup's own, nothing more

    now[0] += timedelta(days=1, seconds=1)
    session = sign_in(client)  # the day ended the session
    second = submit(client, RESEND, session, {"email": "ann@example.org"}, form=PAGE)
    assert flash_of(followed(client, second, session)) == (
        "The platform is asked to send the confirmation email again."
    )
    assert _events(service) == ["newsletter.signup", "newsletter.signup"]
    third = submit(client, RESEND, session, {"email": "ann@example.org"}, form=PAGE)
    assert "Not sent" in flash_of(followed(client, third, session))
    assert _events(service) == ["newsletter.signup", "newsletter.signup"]
    assert [act for act, _ in audit_acts(service)].count("subscriber.resend_confirmation") == 3

    service.subscribers.unsubscribe("ann@example.org")
    refused = submit(client, RESEND, session, {"email": "ann@example.org"}, form=PAGE)
    assert refused.status_code == 409 and "only a pending subscriber" in refused.text
    missing = submit(client, RESEND, session, {"email": "nobody@example.org"}, form=PAGE)
    assert missing.status_code == 404


def test_the_page_lists_the_events_with_their_delivery_and_the_acts_on_the_address(
    client: Any, service: Any, admin_user: str
) -> None:
    consent = {"source": "paper form", "collected_at": "2026-01-01T00:00:00Z"}
    service.subscribers.subscribe({"email": "ann@example.org", "consent": consent})
    clock = service.context.clock()
    with service.storage.transaction() as uow:
        [batch] = uow.outbox.claim_batches(
            now=clock, lease_until=clock + timedelta(minutes=1), batch_size=10, max_batches=1
        )
        uow.outbox.settle_delivered([batch.id], at=clock)
    service.subscribers.unsubscribe("ann@example.org")
    session = sign_in(client)
    submit(client, EDIT, session, {**UNCHANGED, "first_name": ""}, form=PAGE)
    page = get_page(client, PAGE, session)
    rows = page.text.split("What the platform reported")[0].split("Sent to the platform", 1)[1]
    assert rows.index("newsletter.unsubscribed") < rows.index("newsletter.signup")
    assert "Waiting to be sent" in rows and "Delivered 2026" in rows
    acts = page.text.split("What admins did", 1)[1]
    assert '<td data-label="Who">ada</td>' in acts
    assert '<td data-label="What">subscriber.edit</td>' in acts


@pytest.mark.parametrize("path", [EDIT, RESEND])
def test_the_acts_need_their_form_token(
    client: Any, service: Any, admin_user: str, path: str
) -> None:
    _ann(service)
    session = sign_in(client)
    result = post_form(
        client, path, {**UNCHANGED, "first_name": "X"}, cookies={COOKIE_NAME: session}
    )
    assert result.status_code == 403
    assert service.subscribers.get("ann@example.org").first_name == "Ann"
