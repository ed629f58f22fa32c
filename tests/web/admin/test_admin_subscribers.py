"""Admin → Subscribers over HTTP: an address prefix keyset-paged by address (the prefix taken
literally; the list's other filters are in test_admin_subscriber_list.py), the platform's
reports on a subscriber's page, unsubscribe and mark bounced, erasure after a confirm step
(audited without the address) and the streamed CSV export of confirmed subscribers."""

from __future__ import annotations

import csv
import io
import re
from html import unescape
from typing import Any
from urllib.parse import urlencode

import falcon.testing
import pytest

from newsletter_connector.model.contact import normalise_email
from newsletter_connector.service import subscribers as subscriber_service
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.service.subscriber_export import CSV_COLUMNS, csv_row
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL as BASE
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from newsletter_connector.web.admin import subscribers as subscribers_page
from newsletter_connector.web.admin.gate import COOKIE_NAME
from tests.support.admin import (
    csrf_token,
    flash_of,
    followed,
    get_page,
    post_form,
    sign_in,
    submit,
)
from tests.support.analytics_helpers import connect
from tests.support.pages_helpers import FORM, ORIGIN

_ROW_LINK = re.compile(r'<td[^>]*><a href="[^"]*">([^<]*)</a></td>')
_NEXT = re.compile(r'<a href="([^"]*)" rel="next">')


def _add(service: Any, email: str, **fields: Any) -> Any:
    with service.storage.transaction() as uow:
        return uow.subscribers.add(make_subscriber_data(email, **fields))


def _listed(page: Any) -> list[str]:
    return [unescape(email) for email in _ROW_LINK.findall(page.text)]


def _relative(url: str) -> str:
    return unescape(url).removeprefix(BASE)


def _search(client: Any, session: str, query: str) -> Any:
    params = {"address": query, "sort": "address"}
    return get_page(client, "/admin/subscribers?" + urlencode(params), session)


def _act(client: Any, path: str, session: str, fields: dict[str, str]) -> Any:
    return submit(client, path, session, fields, form="/admin/subscribers")


def _flash(client: Any, result: Any, session: str) -> str:
    return flash_of(followed(client, result, session))


# -- signed out, CSRF -------------------------------------------------------------------------


ALL_PATHS = [
    ("GET", "/admin/subscribers"),
    ("GET", "/admin/subscribers?address=a&status=bounced"),
    ("GET", "/admin/subscribers/show?email=a%40example.org"),
    ("GET", "/admin/subscribers/erase?email=a%40example.org"),
    ("POST", "/admin/subscribers/unsubscribe"),
    ("POST", "/admin/subscribers/bounce"),
    ("POST", "/admin/subscribers/erase"),
    ("POST", "/admin/subscribers/export"),
]


@pytest.mark.parametrize(("method", "path"), ALL_PATHS)
def test_the_pages_are_the_unknown_path_404_until_the_admin_area_is_configured(
    client: Any, method: str, path: str
) -> None:
    result = client.simulate_request(method, path, headers={**FORM, "Origin": ORIGIN})
    assert result.status_code == 404
    assert result.content == client.simulate_request(method, "/no-such-path").content


@pytest.mark.parametrize(("method", "path"), ALL_PATHS)
def test_signed_out_visitors_are_sent_to_the_login_and_nothing_changes(
    client: Any, service: Any, admin_user: str, method: str, path: str
) -> None:
    _add(service, "a@example.org", status="confirmed")
    result = client.simulate_request(
        method, path, body="email=a%40example.org", headers={**FORM, "Origin": ORIGIN}
    )
    assert result.status_code == 303
    assert result.headers["location"] == BASE + "/admin/login"
    assert service.subscribers.get("a@example.org").status == "confirmed"
    assert service.admin_audit.latest(5) == []


@pytest.mark.parametrize(
    "path",
    [
        "/admin/subscribers/unsubscribe",
        "/admin/subscribers/bounce",
        "/admin/subscribers/erase",
        "/admin/subscribers/export",
    ],
)
@pytest.mark.parametrize(
    ("token", "origin"), [("wrong", ORIGIN), (None, "https://elsewhere.example")]
)
def test_acts_without_their_token_or_from_elsewhere_change_nothing(
    client: Any, service: Any, admin_user: str, path: str, token: str | None, origin: str
) -> None:
    _add(service, "a@example.org", status="confirmed")
    session = sign_in(client)
    fields = {
        "email": "a@example.org",
        "csrf_token": token or csrf_token(get_page(client, "/admin/subscribers", session)),
    }
    result = post_form(
        client, path, fields, cookies={COOKIE_NAME: session}, headers={"Origin": origin}
    )
    assert result.status_code == 403 and "nothing was changed" in result.text
    assert "text/csv" not in result.headers["content-type"]
    assert service.subscribers.get("a@example.org").status == "confirmed"
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


# -- find -------------------------------------------------------------------------------------


def test_an_address_prefix_pages_in_address_order_with_a_next_link(
    client: Any, service: Any, admin_user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subscribers_page, "PAGE_SIZE", 2)
    for email in ("pe@example.org", "pa@example.org", "q@example.org", "pc@example.org", "o@x.org"):
        _add(service, email)
    session = sign_in(client)
    first = _search(client, session, "P")
    assert first.status_code == 200
    assert _listed(first) == ["pa@example.org", "pc@example.org"]
    next_url = _relative(_NEXT.search(first.text)[1])
    assert next_url == "/admin/subscribers?address=P&sort=address&after=pc%40example.org"
    second = get_page(client, next_url, session)
    assert _listed(second) == ["pe@example.org"] and _NEXT.search(second.text) is None
    everyone = _search(client, session, "")
    assert _listed(everyone) == ["o@x.org", "pa@example.org"]
    nobody = _search(client, session, "zz")
    assert _listed(nobody) == []
    assert "No subscriber matches." in unescape(nobody.text)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("a%", ["a%b@example.org"]),
        ("a_", ["a_b@example.org"]),
        ("a\\", ["a\\b@example.org"]),
        ("a", ["a%b@example.org", "a\\b@example.org", "a_b@example.org", "aab@example.org"]),
    ],
)
def test_percent_underscore_and_backslash_in_a_prefix_are_literal(
    client: Any, service: Any, admin_user: str, query: str, expected: list[str]
) -> None:
    for email in ("aab@example.org", "a%b@example.org", "a_b@example.org", "a\\b@example.org"):
        _add(service, email)
    session = sign_in(client)
    assert _listed(_search(client, session, query)) == expected


def test_a_bad_prefix_is_named_with_a_400(client: Any, admin_user: str) -> None:
    session = sign_in(client)
    for query, named in (
        ("a\x01", "address must not contain control"),
        ("x" * 255, "address must be at most 254 characters"),
    ):
        result = _search(client, session, query)
        assert result.status_code == 400
        assert named in result.text
    after = get_page(client, "/admin/subscribers?sort=address&after=" + "x" * 321, session)
    assert after.status_code == 400 and "after is not a place in this list" in after.text


# -- one subscriber ---------------------------------------------------------------------------


def test_the_page_shows_what_the_platform_reported(
    client: Any, service: Any, admin_user: str
) -> None:
    _add(service, "b@example.org", status="confirmed")
    connect(service)
    report = {"id": "fb-1", "email": "b@example.org", "occurred_at": "2026-02-25T08:00:00Z"}
    service.feedback.apply([{**report, "type": "bounce", "reason": "550 user unknown"}])
    service.feedback.apply([{**report, "id": "fb-2", "type": "complaint", "email": "s@x.org"}])
    session = sign_in(client)
    page = get_page(client, "/admin/subscribers/show?email=b%40example.org", session)
    assert "Bounced since " in page.text
    assert '<td data-label="Reason">550 user unknown</td>' in page.text
    assert '<td data-label="Outcome">bounced</td>' in page.text
    unknown = get_page(client, "/admin/subscribers/show?email=s%40x.org", session)
    assert unknown.status_code == 404 and "No subscriber has this address." in unknown.text
    assert "Suppressed after a complaint on" in unknown.text
    assert "Unsubscribe</button>" not in unknown.text
    bad = get_page(client, "/admin/subscribers/show?email=not-an-address", session)
    assert bad.status_code == 400 and "Not an address" in bad.text


@pytest.mark.parametrize(
    ("path", "action", "before", "after"),
    [
        ("/admin/subscribers/unsubscribe", "subscriber.unsubscribe", "confirmed", "unsubscribed"),
        ("/admin/subscribers/bounce", "subscriber.bounce", "pending", "bounced"),
    ],
)
def test_unsubscribe_and_bounce_change_the_status_audited_with_the_address(
    client: Any, service: Any, admin_user: str, path: str, action: str, before: str, after: str
) -> None:
    _add(service, "c@example.org", status=before)
    session = sign_in(client)
    result = _act(client, path, session, {"email": "C@example.org"})
    assert result.status_code == 303
    assert result.headers["location"] == BASE + "/admin/subscribers/show?email=c%40example.org"
    assert service.subscribers.get("c@example.org").status == after
    assert _flash(client, result, session) == f"c@example.org: {before} → {after}."
    act = service.admin_audit.latest(1)[0]
    assert (act.actor, act.action, act.target) == ("ada", action, "c@example.org")
    again = _act(client, path, session, {"email": "c@example.org"})
    assert _flash(client, again, session) == f"c@example.org was already {after}; nothing changed."
    missing = _act(client, path, session, {"email": "nobody@example.org"})
    assert missing.status_code == 404


def test_erase_asks_first_then_forgets_the_address_in_its_audit(
    client: Any, service: Any, admin_user: str
) -> None:
    _add(service, "gone@example.org", status="confirmed")
    _add(service, "kept@example.org", status="confirmed")
    service.messages.record("gone@example.org", "G", "hello")
    session = sign_in(client)
    for address in ("gone@example.org", "kept@example.org"):
        _act(client, "/admin/subscribers/unsubscribe", session, {"email": address})
    page = get_page(client, "/admin/subscribers/show?email=gone%40example.org", session)
    erase_link = _relative(re.search(r'<a href="([^"]*)">Erase everything', page.text)[1])
    confirm = get_page(client, erase_link, session)
    assert confirm.status_code == 200
    assert "Erase everything stored about gone@example.org?" in confirm.text
    assert service.subscribers.get("gone@example.org").status == "unsubscribed"  # not erased yet
    result = _act(client, "/admin/subscribers/erase", session, {"email": "gone@example.org"})
    assert result.status_code == 303 and result.headers["location"] == BASE + "/admin/subscribers"
    assert _search(client, session, "gone").text.count("gone@example.org") == 0
    flash = _flash(client, result, session)
    assert flash.startswith("Subscriber erased (was unsubscribed); 1 contact messages erased")
    assert "gone@example.org" not in flash
    act = service.admin_audit.latest(1)[0]
    assert act.action == "subscriber.erase"
    assert act.target == subscriber_key(service.context, "gone@example.org")
    assert "gone" not in act.target
    assert len(service.subscribers.erasure_evidence("gone@example.org")) == 1
    # The earlier acts that named the address now name its keyed hash; others keep theirs.
    acts = {(a.action, a.target) for a in service.admin_audit.latest(10)}
    assert ("subscriber.unsubscribe", act.target) in acts
    assert ("subscriber.unsubscribe", "kept@example.org") in acts
    assert not any("gone@" in (target or "") for _, target in acts)
    assert "gone@example.org" not in get_page(client, "/admin/audit", session).text


def test_erase_of_a_bad_address_shows_the_confirm_step_with_the_error(
    client: Any, service: Any, admin_user: str
) -> None:
    session = sign_in(client)
    result = _act(client, "/admin/subscribers/erase", session, {"email": "no address"})
    assert result.status_code == 400 and 'role="alert"' in result.text
    assert [act.action for act in service.admin_audit.latest(5)] == ["login"]


# -- export -----------------------------------------------------------------------------------


def test_export_is_a_csv_attachment_of_confirmed_subscribers_without_tokens(
    client: Any, service: Any, admin_user: str
) -> None:
    kept = _add(service, "k@example.org", status="confirmed", first_name="=cmd", categories=())
    _add(service, "p@example.org", status="pending")
    _add(service, "u@example.org", status="unsubscribed")
    session = sign_in(client)
    result = _act(client, "/admin/subscribers/export", session, {})
    assert result.status_code == 200
    assert result.headers["content-type"] == "text/csv; charset=utf-8"
    assert result.headers["content-disposition"] == (
        'attachment; filename="subscribers-confirmed-2026-03-01.csv"'
    )
    rows = list(csv.reader(io.StringIO(result.text)))
    assert rows[0] == list(CSV_COLUMNS) and len(rows) == 2
    row = dict(zip(CSV_COLUMNS, rows[1], strict=True))
    assert row["email"] == "k@example.org" and row["status"] == "confirmed"
    assert row["first_name"] == "'=cmd" and row["prefs_email_briefings"] == "daily"
    assert row["created_at"] == "2026-01-02T03:04:05.123456Z"
    for token in (kept.confirm_token, kept.unsubscribe_token, kept.profile_token):
        assert token not in result.text
    act = service.admin_audit.latest(1)[0]
    assert (act.action, act.target) == ("subscribers.export", "confirmed")


@pytest.mark.parametrize("separator", [",", ";"])
def test_export_keeps_a_formula_after_a_separator_inside_a_name_from_running(
    client: Any, service: Any, admin_user: str, separator: str
) -> None:
    """Opened in a locale whose list separator is ``;``, a comma file's quoted cell
    ``Ann;=cmd|' /C calc'!A0`` splits in two, and the second would run as a formula."""
    _add(service, "ann@example.org", status="confirmed", first_name="Ann;=cmd|' /C calc'!A0",
         last_name="Lee,+SUM(A1);@x;\tz;-1")  # fmt: skip
    session = sign_in(client)
    result = _act(client, "/admin/subscribers/export", session, {})
    assert result.status_code == 200
    row = dict(zip(CSV_COLUMNS, list(csv.reader(io.StringIO(result.text)))[1], strict=True))
    assert row["first_name"] == "Ann;'=cmd|' /C calc'!A0"
    assert row["last_name"] == "Lee,'+SUM(A1);'@x;'\tz;'-1"
    # However a spreadsheet splits the raw line, no piece starts like a formula.
    line = result.text.splitlines()[1]
    for piece in line.replace('"', "").split(separator):
        assert not piece.startswith(("=", "+", "-", "@", "\t", "\r")), piece


def test_export_streams_reading_the_list_lazily(client: Any, service: Any, admin_user: str) -> None:
    _add(service, "first@example.org", status="confirmed")
    session = sign_in(client)
    token = csrf_token(get_page(client, "/admin/subscribers", session))
    environ = falcon.testing.create_environ(
        path="/admin/subscribers/export",
        method="POST",
        body=urlencode({"csrf_token": token}),
        headers={**FORM, "Origin": ORIGIN, "Cookie": f"{COOKIE_NAME}={session}"},
    )
    started: list[str] = []
    body = client.app(environ, lambda status, headers: started.append(status))
    assert started == ["200 OK"]
    chunks = iter(body)
    assert next(chunks).decode().startswith("email,first_name,")
    _add(service, "later@example.org", status="confirmed")  # after the response began
    rest = b"".join(chunks).decode()
    assert "first@example.org" in rest and "later@example.org" in rest


def test_the_walk_reads_confirmed_subscribers_in_keyset_pages(service: Any) -> None:
    emails = [f"w{n}@example.org" for n in range(5)]
    for email in emails:
        _add(service, email, status="confirmed")
    _add(service, "p@example.org", status="pending")
    assert [r.email for r in service.subscribers.walk("confirmed", page_size=2)] == emails
    assert subscriber_service.EXPORT_PAGE_SIZE == 1000
    with pytest.raises(Exception, match="status must be one of"):
        list(service.subscribers.walk("gone"))


def test_a_csv_row_keeps_phone_numbers_and_neutralises_formulas_in_names(service: Any) -> None:
    record = _add(
        service,
        "r@example.org",
        last_name="+SUM(A1)",
        phone="+49 30 1234567",
        sms_enabled=True,
        categories=("politics", "science"),
    )
    row = dict(zip(CSV_COLUMNS, csv_row(service.subscribers.shown_contact(record)), strict=True))
    assert row["phone"] == "+49 30 1234567" and row["last_name"] == "'+SUM(A1)"
    assert row["categories"] == "politics science" and row["prefs_sms_enabled"] == "true"
    assert row["confirmed_at"] == ""


@pytest.mark.parametrize("address", ["=cmd|'/ccalc'!a0@evil.co", "+1+1@x.co", "-2+3@x.co"])
def test_a_csv_row_neutralises_an_address_starting_like_a_formula(
    service: Any, address: str
) -> None:
    email = normalise_email(address)  # a stranger may sign up with it
    record = _add(service, email, phone="-030 1234567", sms_enabled=True)
    row = dict(zip(CSV_COLUMNS, csv_row(service.subscribers.shown_contact(record)), strict=True))
    assert row["email"] == "'" + email
    assert row["phone"] == "-030 1234567"  # no letter: at most arithmetic, left exact
