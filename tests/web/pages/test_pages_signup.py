"""The signup page: a pending subscriber and ``newsletter.signup`` for a good form; the form
again, with the error beside the field and the typed values, for a bad one; CSRF and honeypot."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.pytest_plugin import TEST_BASE_URL
from newsletter_connector.timeutil import utcnow
from newsletter_connector.web.pages.csrf import COOKIE_NAME
from tests.support.pages_helpers import FORM, checked, field_error, input_value, open_form, text_of
from tests.support.subscriber_helpers import events_of, outbox

GOOD = {"email": "Reader@Example.org", "zip": "12345", "frequency": "weekly", "website": ""}


def _count(service: Any) -> int:
    return len(service.subscribers.list_page().items)


def test_form_has_labelled_fields_a_token_and_a_safe_cookie(newsletter_client: Any) -> None:
    page = newsletter_client.simulate_get("/signup")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    html = page.text
    for name in ("email", "zip", "frequency"):
        assert f'<label for="{name}">' in html
    assert checked(html, "frequency") == ["daily"]
    cookie = page.cookies[COOKIE_NAME]
    assert cookie.http_only and cookie.secure and cookie.same_site == "Lax"
    assert cookie.path == "/newsletter"  # the mount path of base_url
    assert "<script" not in html
    assert 'name="website"' in html and 'class="nl-hp"' in html  # the honeypot


def test_good_signup_creates_a_pending_subscriber_and_redirects(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    form = open_form(newsletter_client, "/signup")
    result = form.post(newsletter_client, "/signup", GOOD)
    assert result.status_code == 303
    assert result.headers["location"] == TEST_BASE_URL + "/signup/thanks"
    record = newsletter_service.subscribers.get("reader@example.org")
    assert record.status == "pending"
    assert record.zip == "12345"
    prefs = newsletter_service.subscribers.contact(record)["prefs"]
    assert prefs["email"] == {
        "briefings": "weekly",
        "puzzles": "weekly",
        "onThisDay": "weekly",
        "local": "weekly",
    }
    [event] = events_of(newsletter_service, "newsletter.signup")
    assert event["payload"]["email"] == "reader@example.org"
    thanks = newsletter_client.simulate_get("/signup/thanks")
    assert thanks.status_code == 200
    assert "Check your email" in text_of(thanks.text)


def test_zip_is_optional(newsletter_client: Any, newsletter_service: Any) -> None:
    form = open_form(newsletter_client, "/signup")
    result = form.post(newsletter_client, "/signup", {**GOOD, "zip": "  "})
    assert result.status_code == 303
    assert newsletter_service.subscribers.get("reader@example.org").zip is None


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"email": "not-an-address"}, "email", "Enter your email address"),
        ({"email": ""}, "email", "Enter your email address"),
        ({"zip": "1234"}, "zip", "exactly 5 digits"),
        ({"zip": "ABCDE"}, "zip", "exactly 5 digits"),
        ({"frequency": "hourly"}, "frequency", "Choose daily or weekly"),
    ],
)
def test_bad_input_shows_the_error_beside_the_field_and_keeps_values(
    newsletter_client: Any,
    newsletter_service: Any,
    fields: dict[str, str],
    field: str,
    message: str,
) -> None:
    form = open_form(newsletter_client, "/signup")
    result = form.post(newsletter_client, "/signup", {**GOOD, **fields})
    assert result.status_code == 400
    html = result.text
    assert message in (field_error(html, field) or "")
    assert 'aria-invalid="true"' in html
    assert f'href="#{field}"' in html  # the summary links to the field
    assert "<title>Error: " in html
    typed = {**GOOD, **fields}
    assert input_value(html, "email") == typed["email"].strip()
    assert input_value(html, "zip") == typed["zip"].strip()
    assert _count(newsletter_service) == 0
    assert outbox(newsletter_service) == []
    assert COOKIE_NAME in result.cookies  # a fresh token comes with the form


def test_typed_values_are_escaped(newsletter_client: Any, newsletter_service: Any) -> None:
    form = open_form(newsletter_client, "/signup")
    evil = '"><script>alert(1)</script>'
    result = form.post(newsletter_client, "/signup", {**GOOD, "email": evil})
    assert result.status_code == 400
    assert "<script>" not in result.text
    assert input_value(result.text, "email") == evil


def test_existing_address_gets_the_same_page_and_is_unchanged(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    newsletter_service.subscribers.subscribe({"email": "reader@example.org", "zip": "99999"})
    newsletter_service.subscribers.unsubscribe("reader@example.org")
    form = open_form(newsletter_client, "/signup")
    result = form.post(newsletter_client, "/signup", GOOD)
    assert result.status_code == 303
    assert result.headers["location"] == TEST_BASE_URL + "/signup/thanks"
    record = newsletter_service.subscribers.get("reader@example.org")
    assert (record.status, record.zip) == ("unsubscribed", "99999")


def test_honeypot_looks_like_success_and_stores_nothing(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    form = open_form(newsletter_client, "/signup")
    result = form.post(newsletter_client, "/signup", {**GOOD, "website": "http://spam.example"})
    assert result.status_code == 303
    assert result.headers["location"] == TEST_BASE_URL + "/signup/thanks"
    assert _count(newsletter_service) == 0
    assert outbox(newsletter_service) == []


@pytest.mark.parametrize(
    "variant", ["no token", "no cookie", "other cookie", "forged token", "garbage token"]
)
def test_without_a_valid_token_the_form_comes_back_and_nothing_changes(
    newsletter_client: Any, newsletter_service: Any, variant: str
) -> None:
    form = open_form(newsletter_client, "/signup")
    other = open_form(newsletter_client, "/signup")  # a second browser
    if variant == "no token":
        result = form.post(newsletter_client, "/signup", GOOD, with_token=False)
    elif variant == "no cookie":
        result = form.post(newsletter_client, "/signup", GOOD, with_cookie=False)
    elif variant == "other cookie":
        form.cookie = other.cookie
        result = form.post(newsletter_client, "/signup", GOOD)
    elif variant == "forged token":
        issued, mac = form.token.split(".")
        form.token = f"{issued}.{'0' * len(mac)}"
        result = form.post(newsletter_client, "/signup", GOOD)
    else:
        form.token = "hello"
        result = form.post(newsletter_client, "/signup", GOOD)
    assert result.status_code == 400
    assert "has to be sent again" in text_of(result.text)
    assert input_value(result.text, "email") == GOOD["email"]
    assert _count(newsletter_service) == 0
    # The fresh token in the answer works.
    again = open_form(newsletter_client, "/signup", cookie=result.cookies[COOKIE_NAME].value)
    assert again.post(newsletter_client, "/signup", GOOD).status_code == 303


def test_a_token_expires_after_a_day(
    newsletter_settings: Any, newsletter_storage: Any, newsletter_service: Any
) -> None:
    now = [utcnow()]
    service = NewsletterService.build(
        newsletter_settings, storage=newsletter_storage, clock=lambda: now[0]
    )
    client = falcon.testing.TestClient(create_app(service=service))
    form = open_form(client, "/signup")
    now[0] += timedelta(hours=24, seconds=1)
    assert form.post(client, "/signup", GOOD).status_code == 400
    form = open_form(client, "/signup")
    now[0] += timedelta(hours=23)
    assert form.post(client, "/signup", GOOD).status_code == 303


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "http://news.example.test"},  # wrong scheme: another origin
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_cross_site_posts_are_refused(
    newsletter_client: Any, newsletter_service: Any, headers: dict[str, str]
) -> None:
    form = open_form(newsletter_client, "/signup")
    result = form.post(newsletter_client, "/signup", GOOD, headers=headers)
    assert result.status_code == 403
    assert "was not accepted" in text_of(result.text)
    assert _count(newsletter_service) == 0


def test_same_site_provenance_headers_are_accepted(newsletter_client: Any) -> None:
    form = open_form(newsletter_client, "/signup")
    headers = {"Sec-Fetch-Site": "same-origin", "Origin": "null"}
    assert form.post(newsletter_client, "/signup", GOOD, headers=headers).status_code == 303


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        ('{"email": "a@example.org"}', {"Content-Type": "application/json"}, 415),
        ("email=a@example.org", {}, 415),
        (b"email=%FF%FE", FORM, 400),
        ("email=" + "a" * 200_000, FORM, 413),
        ("&".join(f"f{i}=1" for i in range(300)), FORM, 400),
    ],
)
def test_malformed_posts_get_an_html_error_page_and_change_nothing(
    newsletter_client: Any, newsletter_service: Any, body: Any, headers: Any, status: int
) -> None:
    result = newsletter_client.simulate_post("/signup", body=body, headers=headers)
    assert result.status_code == status
    assert result.headers["content-type"].startswith("text/html")
    assert "We could not read what was sent" in text_of(result.text)
    assert "Nothing has changed" in text_of(result.text)
    assert _count(newsletter_service) == 0


def test_repeated_fields_use_the_first_value(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    form = open_form(newsletter_client, "/signup")
    pairs = [("email", "one@example.org"), ("email", "two@example.org"), ("frequency", "daily")]
    assert form.post(newsletter_client, "/signup", pairs).status_code == 303
    assert [r.email for r in newsletter_service.subscribers.list_page().items] == [
        "one@example.org"
    ]
