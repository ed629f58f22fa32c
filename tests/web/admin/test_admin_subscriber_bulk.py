"""Admin → Subscribers, acts on the ticked: unsubscribe, mark bounced and erase after a
confirm step (erasing asks for the number), each queuing exactly the events the single act
queues and audited once with the filter and the outcome; and the ticked exported as CSV with
the chosen columns, whatever their status."""

from __future__ import annotations

import csv
import io
import re
from html import unescape
from typing import Any

import pytest

from newsletter_connector.errors import NotFound
from newsletter_connector.service.subscriber_export import CSV_COLUMNS
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.admin import flash_of, followed, get_page, queued_events, submit

LIST = "/admin/subscribers?status=bounced&zip=021"
PEOPLE = {
    "ann@example.org": ("bounced", "02134"),
    "bob@example.org": ("bounced", "02199"),
    "cy@example.org": ("bounced", "02101"),
    "dee@example.org": ("confirmed", "02134"),
    "eve@example.org": ("unsubscribed", "10001"),
}


@pytest.fixture
def people(service: Any) -> None:
    with service.storage.transaction() as uow:
        for email, (status, zip_code) in PEOPLE.items():
            uow.subscribers.add(make_subscriber_data(email, status=status, zip=zip_code))


def _post(client: Any, session: str, path: str, fields: dict[str, Any]) -> Any:
    return submit(client, path, session, fields, form="/admin/subscribers")


def _audit(service: Any) -> list[tuple[str, str | None, str | None]]:
    return [(a.action, a.target, a.detail) for a in service.admin_audit.latest(10)]


def test_the_list_ticks_rows_and_offers_the_acts(client: Any, session: str, people: None) -> None:
    page = get_page(client, LIST, session)
    assert re.findall(r'name="pick" value="([^"]+)"', page.text) == [
        "cy@example.org",
        "bob@example.org",
        "ann@example.org",
    ]
    assert 'name="filter" value="status=bounced&amp;zip=021"' in page.text
    for words in ("Unsubscribe…", "Mark bounced…", "Erase…", "Export the ticked as CSV"):
        assert words in page.text


def test_unsubscribe_three_after_a_confirm_step_as_the_single_act_does(
    client: Any, service: Any, session: str, people: None
) -> None:
    picked = ["ann@example.org", "bob@example.org", "cy@example.org"]
    fields = {"pick": picked, "filter": "status=bounced&zip=021"}
    confirm = _post(client, session, "/admin/subscribers/bulk", {**fields, "act": "unsubscribe"})
    assert confirm.status_code == 200
    assert "Unsubscribe 3 subscribers?" in unescape(confirm.text)
    assert all(email in confirm.text for email in picked)
    assert _audit(service)[0][0] == "login"  # the confirm step changes nothing
    done = _post(client, session, "/admin/subscribers/bulk/unsubscribe", fields)
    page = followed(client, done, session)
    assert flash_of(page) == "3 subscribers unsubscribed."
    assert done.headers["location"].endswith(LIST)
    for email in picked:
        assert service.subscribers.get(email).status == "unsubscribed"
        assert queued_events(service, email) == ["newsletter.unsubscribed"]
    assert service.subscribers.get("dee@example.org").status == "confirmed"
    assert _audit(service)[0] == (
        "subscribers.bulk_unsubscribe",
        "3 subscribers",
        "filter: status=bounced&zip=021; 3 changed, 0 unchanged, 0 gone",
    )
    # The single act queues the same event.
    service.subscribers.unsubscribe("dee@example.org")
    assert queued_events(service, "dee@example.org") == ["newsletter.unsubscribed"]


def test_mark_bounced_counts_the_ones_already_so_and_the_ones_gone(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {"pick": ["dee@example.org", "eve@example.org", "ann@example.org", "zed@x.org"]}
    done = _post(client, session, "/admin/subscribers/bulk/bounce", fields)
    assert flash_of(followed(client, done, session)) == (
        "1 subscriber marked bounced; 2 already so, unchanged; 1 no longer stored."
    )
    assert service.subscribers.get("dee@example.org").status == "bounced"
    assert queued_events(service, "dee@example.org") == ["newsletter.bounced"]
    assert queued_events(service, "eve@example.org") == []
    assert _audit(service)[0][:2] == ("subscribers.bulk_bounce", "4 subscribers")


def test_erase_asks_for_the_number_and_forgets_the_addresses(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {"pick": ["ann@example.org", "bob@example.org"], "filter": "status=bounced"}
    confirm = _post(client, session, "/admin/subscribers/bulk", {**fields, "act": "erase"})
    assert "Type 2 to confirm" in confirm.text
    wrong = _post(
        client, session, "/admin/subscribers/bulk/erase", {**fields, "confirm_count": "3"}
    )
    assert wrong.status_code == 400
    assert "type 2, the number of subscribers to erase, to confirm" in wrong.text
    assert service.subscribers.get("ann@example.org").status == "bounced"
    assert _audit(service)[0][0] == "login"
    done = _post(client, session, "/admin/subscribers/bulk/erase", {**fields, "confirm_count": "2"})
    assert flash_of(followed(client, done, session)) == "2 subscribers erased."
    for email in ("ann@example.org", "bob@example.org"):
        with pytest.raises(NotFound):
            service.subscribers.get(email)
    action, target, detail = _audit(service)[0]
    assert (action, target) == ("subscribers.bulk_erase", "2 subscribers")
    assert "ann@" not in (detail or "") and "bob@" not in (detail or "")


@pytest.mark.parametrize(
    ("path", "fields", "message"),
    [
        ("/admin/subscribers/bulk", {"act": "unsubscribe"}, "tick at least one subscriber"),
        ("/admin/subscribers/bulk/unsubscribe", {}, "tick at least one subscriber"),
        (
            "/admin/subscribers/bulk/bounce",
            {"pick": [f"p{n}@example.org" for n in range(51)]},
            "at most 50 subscribers at once",
        ),
        ("/admin/subscribers/bulk", {"pick": "ann@example.org", "act": "x"}, "choose unsub"),
        (
            "/admin/subscribers/bulk/unsubscribe",
            {"pick": ["ann@example.org", "not an address"]},
            "'not an address' is not an email address",
        ),
        (
            "/admin/subscribers/export-selected",
            {"pick": "ann@example.org", "columns": "confirm_token"},
            "no such column: confirm_token",
        ),
    ],
)
def test_a_bulk_act_without_ticks_or_with_too_many_changes_nothing(
    client: Any,
    service: Any,
    session: str,
    people: None,
    path: str,
    fields: dict[str, Any],
    message: str,
) -> None:
    result = _post(client, session, path, fields)
    assert result.status_code == 400
    assert message in unescape(result.text)
    assert _audit(service)[0][0] == "login"
    assert service.subscribers.get("ann@example.org").status == "bounced"


def test_the_column_choices_say_in_words_what_each_column_holds(
    client: Any, session: str, people: None
) -> None:
    """Each CSV column is offered by what it holds, with the heading the file gives it; the
    cadence filter names "off" as staff do."""
    text = unescape(get_page(client, "/admin/subscribers", session).text)
    choices = re.findall(r'name="columns" value="([^"]+)" checked>([^<]+)</label>', text)
    assert [column for column, _ in choices] == 2 * list(CSV_COLUMNS)  # ticked, all matching
    words = dict(choices)
    assert words["email"] == "Email address (email)"
    assert words["prefs_email_on_this_day"] == "On this day: how often (prefs_email_on_this_day)"
    assert words["created_at"] == "When they signed up (created_at)"
    assert '<option value="off">Off</option>' in text


def test_export_the_ticked_with_the_chosen_columns_whatever_their_status(
    client: Any, service: Any, session: str, people: None
) -> None:
    fields = {
        "pick": ["eve@example.org", "dee@example.org", "gone@example.org"],
        "columns": ["status", "email", "zip"],
        "filter": "sort=address",
    }
    result = _post(client, session, "/admin/subscribers/export-selected", fields)
    assert result.status_code == 200
    assert result.headers["content-type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(io.StringIO(result.text)))
    assert rows == [
        ["email", "zip", "status"],
        ["eve@example.org", "10001", "unsubscribed"],
        ["dee@example.org", "02134", "confirmed"],
    ]
    action, target, detail = _audit(service)[0]
    assert (action, target) == ("subscribers.export_selected", "2 subscribers")
    assert detail == "filter: sort=address; columns: email zip status"
