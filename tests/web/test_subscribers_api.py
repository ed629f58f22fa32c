"""The subscriber endpoints (docs/newsletter-api.md) through the Newsletter API (create_app)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import select

from newsletter_connector.plugins.sql_store.tables import deletions
from tests.support.subscriber_helpers import (
    CONTACT_FIELDS,
    SUBSCRIBERS,
    events_of,
    one,
    outbox,
    patch,
    post,
    wire,
)

BASE = "https://news.example.test/newsletter"


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _count(client: Any, auth: dict[str, str]) -> int:
    return len(client.simulate_get(SUBSCRIBERS, headers=auth, params={"limit": 500}).json["data"])


# -- POST /subscribers ---------------------------------------------------------------------------


def test_new_signup_without_consent_is_pending_with_links(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    result = post(newsletter_client, auth, {"email": "  Alice@Example.ORG ", "zip": "02134"})
    assert result.status_code == 201
    contact = result.json
    assert list(contact) == [*CONTACT_FIELDS, "confirm_url"]
    assert contact["email"] == "alice@example.org"
    assert contact["status"] == "pending"
    assert contact["zip"] == "02134"
    assert contact["first_name"] is None and contact["last_name"] is None
    assert contact["confirmed_at"] is None and contact["unsubscribed_at"] is None
    assert contact["categories"] == []
    assert contact["prefs"] == {
        "email": {"briefings": "daily", "puzzles": "daily", "onThisDay": "daily", "local": "daily"},
        "sms": {"enabled": False},
    }
    assert contact["created_at"].endswith("Z")
    assert contact["confirm_url"].startswith(f"{BASE}/confirm/")
    assert contact["unsubscribe_url"].startswith(f"{BASE}/unsubscribe/")
    assert contact["profile_url"].startswith(f"{BASE}/profile/")
    tokens = [contact[k].rsplit("/", 1)[1] for k in ("confirm_url", "unsubscribe_url")]
    assert len(set(tokens)) == 2 and all(len(t) >= 22 for t in tokens)  # >= 128 bits
    assert result.headers["location"] == "/api/newsletter/v1/subscribers/alice%40example.org"
    assert "phone" not in contact
    # The signup event carries the very same contact, byte for byte.
    [event] = outbox(newsletter_service)
    assert event["type"] == "newsletter.signup"
    assert wire(event["payload"]) == result.content
    assert event["subscriber_key"] and "alice" not in event["subscriber_key"]


def test_signup_with_valid_consent_is_confirmed_with_provenance(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    collected = _iso(datetime.now(timezone.utc) - timedelta(days=3))
    result = post(
        newsletter_client,
        auth,
        {
            "email": "bob@example.org",
            "consent": {"source": "paper form", "collected_at": collected},
        },
    )
    assert result.status_code == 201
    assert result.json["status"] == "confirmed"
    assert result.json["confirmed_at"] is not None
    assert "confirm_url" not in result.json
    record = newsletter_service.subscribers.get("bob@example.org")
    assert record.consent_source == "paper form"
    assert record.consent_collected_at is not None
    assert [e["type"] for e in outbox(newsletter_service)] == [
        "newsletter.signup",
        "newsletter.confirmed",
    ]
    assert all(wire(e["payload"]) == result.content for e in outbox(newsletter_service))


def test_consent_with_offset_is_converted_to_utc(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    body = {
        "email": "off@example.org",
        "consent": {"source": "fair", "collected_at": "2025-01-01T12:00:00+02:00"},
    }
    assert post(newsletter_client, auth, body).status_code == 201
    record = newsletter_service.subscribers.get("off@example.org")
    assert record.consent_collected_at == datetime(2025, 1, 1, 10, 0, 0)


@pytest.mark.parametrize(
    "consent",
    [
        {"source": "web"},
        {"collected_at": "2025-01-01T00:00:00Z"},
        {"source": "web", "collected_at": "yesterday"},
        {"source": "web", "collected_at": "2025-13-45T00:00:00Z"},
        {"source": "web", "collected_at": "2025-01-01T00:00:00"},  # no time zone
        {"source": "web", "collected_at": "2025-01-01"},
        {"source": "web", "collected_at": 1735689600},
        {"source": "", "collected_at": "2025-01-01T00:00:00Z"},
        {"source": "web", "collected_at": "2999-01-01T00:00:00Z"},
        {"source": "web", "collected_at": None},
        {"source": "web", "collected_at": "0001-01-01T00:00:00+01:00"},  # overflows in UTC
        {"source": "web", "collected_at": "9999-12-31T23:59:59-01:00"},
        {"source": "web", "collected_at": "2025-01-01 00:00:00Z"},  # not the T form
        {"source": "web", "collected_at": "2025-01-01T00:00:00Z", "channel": "x"},
        {"source": 5, "collected_at": "2025-01-01T00:00:00Z"},
        {"source": "web\u0000form", "collected_at": "2025-01-01T00:00:00Z"},
        {"source": "web\udc00", "collected_at": "2025-01-01T00:00:00Z"},
        {},
        "yes",
        True,
    ],
)
def test_bad_consent_is_consent_required_and_creates_nothing(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, consent: Any
) -> None:
    result = post(newsletter_client, auth, {"email": "carol@example.org", "consent": consent})
    assert result.status_code == 400
    assert result.json["error"] == "consent_required"
    assert "consent" in result.json["message"]
    assert newsletter_client.simulate_get(one("carol@example.org"), headers=auth).status_code == 404
    assert outbox(newsletter_service) == []


def test_consent_a_moment_in_the_future_is_refused(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    soon = _iso(datetime.now(timezone.utc) + timedelta(minutes=2))
    body = {"email": "f@example.org", "consent": {"source": "web", "collected_at": soon}}
    assert post(newsletter_client, auth, body).json["error"] == "consent_required"


def test_null_consent_means_no_consent(newsletter_client: Any, auth: dict[str, str]) -> None:
    result = post(newsletter_client, auth, {"email": "n@example.org", "consent": None})
    assert result.status_code == 201 and result.json["status"] == "pending"


def test_existing_address_returns_200_with_profile_data_intact(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    first = post(newsletter_client, auth, {"email": "dora@example.org", "zip": "11111"})
    patch(newsletter_client, auth, "dora@example.org", {"first_name": "Dora", "gender": "woman"})
    again = post(
        newsletter_client,
        auth,
        {"email": "DORA@example.org", "zip": "22222", "first_name": "Other", "categories": []},
    )
    assert again.status_code == 200
    assert again.json["first_name"] == "Dora"
    assert again.json["zip"] == "11111"
    assert again.json["gender"] == "woman"
    # confirm_url never rotates: a re-signup keeps the same link.
    assert again.json["confirm_url"] == first.json["confirm_url"]
    assert _count(newsletter_client, auth) == 1
    # The signup announced the address moments ago: a re-signup within the resend interval
    # queues nothing more (see tests/web/pages/test_signup_resend.py for the interval itself).
    assert len(events_of(newsletter_service, "newsletter.signup")) == 1


def test_resignup_with_consent_does_not_skip_double_opt_in(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    post(newsletter_client, auth, {"email": "eve@example.org"})
    body = {
        "email": "eve@example.org",
        "consent": {"source": "web", "collected_at": "2025-01-01T00:00:00Z"},
    }
    again = post(newsletter_client, auth, body)
    assert again.status_code == 200 and again.json["status"] == "pending"


def test_unsubscribed_address_is_never_silently_resubscribed(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    post(newsletter_client, auth, {"email": "fay@example.org"})
    patch(newsletter_client, auth, "fay@example.org", {"status": "unsubscribed"})
    before = len(outbox(newsletter_service))
    body = {
        "email": "fay@example.org",
        "consent": {"source": "import", "collected_at": "2025-01-01T00:00:00Z"},
    }
    again = post(newsletter_client, auth, body)
    assert again.status_code == 200
    assert again.json["status"] == "unsubscribed"
    assert "confirm_url" not in again.json
    assert len(outbox(newsletter_service)) == before


def test_unknown_categories_are_ignored(newsletter_client: Any, auth: dict[str, str]) -> None:
    body = {"email": "g@example.org", "categories": ["travel", "aliens", "Health", "travel"]}
    result = post(newsletter_client, auth, body)
    assert result.status_code == 201
    assert result.json["categories"] == ["health", "travel"]


def test_partial_prefs_keep_defaults(newsletter_client: Any, auth: dict[str, str]) -> None:
    body = {"email": "h@example.org", "prefs": {"email": {"puzzles": "weekly", "local": "off"}}}
    prefs = post(newsletter_client, auth, body).json["prefs"]
    assert prefs["email"] == {
        "briefings": "daily",
        "puzzles": "weekly",
        "onThisDay": "daily",
        "local": "off",
    }
    assert prefs["sms"] == {"enabled": False}


def test_phone_alone_does_not_enable_sms_or_appear(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    result = post(newsletter_client, auth, {"email": "i@example.org", "phone": "+1 555 010 0000"})
    assert "phone" not in result.json
    assert result.json["prefs"]["sms"]["enabled"] is False
    assert newsletter_service.subscribers.get("i@example.org").phone == "+1 555 010 0000"
    # The number in any form (as sent or digits only); not "555" alone, which random hex in
    # the events' ids and keys sometimes contains.
    payloads = json.dumps([event["payload"] for event in outbox(newsletter_service)])
    assert "010 0000" not in payloads and "0100000" not in payloads


def test_phone_appears_with_sms_consent(newsletter_client: Any, auth: dict[str, str]) -> None:
    body = {"email": "j@example.org", "phone": "555-010-0001", "prefs": {"sms": {"enabled": True}}}
    result = post(newsletter_client, auth, body)
    assert result.json["phone"] == "555-010-0001"
    assert list(result.json)[-1] == "phone"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not-an-address"}, "email"),
        ({"email": "a@b"}, "email"),
        ({"email": 42}, "email"),
        ({}, "email"),
        ({"email": "k@example.org", "zip": "1234"}, "zip"),
        ({"email": "k@example.org", "zip": "1234a"}, "zip"),
        ({"email": "k@example.org", "zip": 12345}, "zip"),
        ({"email": "k@example.org", "zip": ""}, "zip"),
        ({"email": "k@example.org", "prefs": {"email": {"local": "hourly"}}}, "prefs.email.local"),
        ({"email": "k@example.org", "prefs": {"email": {"news": "daily"}}}, "prefs.email.news"),
        ({"email": "k@example.org", "prefs": {"sms": {"enabled": "yes"}}}, "prefs.sms.enabled"),
        ({"email": "k@example.org", "prefs": {"sms": {"enabled": True}}}, "prefs.sms.enabled"),
        ({"email": "k@example.org", "prefs": "daily"}, "prefs"),
        ({"email": "k@example.org", "categories": "health"}, "categories"),
        ({"email": "k@example.org", "categories": [1]}, "categories"),
        ({"email": "k@example.org", "phone": "call me"}, "phone"),
        ({"email": "k@example.org", "first_name": 7}, "first_name"),
        ({"email": "k@example.org", "first_name": "A\u0000B"}, "first_name"),
        ({"email": "k@example.org", "last_name": "\ud800"}, "last_name"),
        ({"email": "k@example.org", "last_name": "x" * 201}, "last_name"),
        ({"email": "k@example.org", "status": "confirmed"}, "status"),
        ({"email": "k@example.org", "favourite_colour": "blue"}, "favourite_colour"),
    ],
)
def test_invalid_signup_names_the_field_and_creates_nothing(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, body: Any, field: str
) -> None:
    result = post(newsletter_client, auth, body)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]
    assert _count(newsletter_client, auth) == 0
    assert outbox(newsletter_service) == []


@pytest.mark.parametrize(
    "raw", ["{", "", "[1,2]", '"text"', "null", "NaN", b"\xff\xfe", "[" * 50_000 + "]" * 50_000]
)
def test_malformed_body_is_invalid_request(
    newsletter_client: Any, auth: dict[str, str], raw: Any
) -> None:
    result = newsletter_client.simulate_post(SUBSCRIBERS, headers=auth, body=raw)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert "body" in result.json["message"]


def test_oversized_body_is_invalid_request(newsletter_client: Any, auth: dict[str, str]) -> None:
    body = json.dumps({"email": "big@example.org", "first_name": "x" * 70_000})
    result = newsletter_client.simulate_post(SUBSCRIBERS, headers=auth, body=body)
    assert result.status_code == 400 and result.json["error"] == "invalid_request"


def test_every_subscriber_endpoint_needs_the_key(newsletter_client: Any) -> None:
    for method, path in [
        ("GET", SUBSCRIBERS),
        ("POST", SUBSCRIBERS),
        ("GET", one("a@example.org")),
        ("PATCH", one("a@example.org")),
        ("DELETE", one("a@example.org")),
        ("GET", "/api/newsletter/v1/contact-messages"),
    ]:
        result = newsletter_client.simulate_request(method, path, body="{}")
        assert result.status_code == 401, (method, path)
        assert result.json["error"] == "unauthorized"


# -- GET /subscribers/{email} --------------------------------------------------------------------


def test_get_one_is_percent_decoded_and_case_insensitive(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    created = post(newsletter_client, auth, {"email": "o'neil+news@example.org"}).json
    for path in (
        one("O'Neil+News@Example.org"),
        f"{SUBSCRIBERS}/o%27neil%2Bnews%40EXAMPLE.org",
        f"{SUBSCRIBERS}/o'neil+news@example.org",
    ):
        result = newsletter_client.simulate_get(path, headers=auth)
        assert result.status_code == 200, path
        assert result.json == created


def test_address_with_a_slash_is_reachable(newsletter_client: Any, auth: dict[str, str]) -> None:
    # "/" is legal in the local part; percent-decoded, it must not split the path.
    created = post(newsletter_client, auth, {"email": "dept/news@example.org"})
    assert created.status_code == 201
    for method in ("GET", "PATCH", "DELETE"):
        result = newsletter_client.simulate_request(
            method, one("dept/news@example.org"), headers=auth, body="{}"
        )
        assert result.status_code == 200, (method, result.text)


def test_get_unknown_is_404_and_bad_address_is_400(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    missing = newsletter_client.simulate_get(one("nobody@example.org"), headers=auth)
    assert missing.status_code == 404
    assert missing.json == {"error": "not_found", "message": missing.json["message"]}
    bad = newsletter_client.simulate_get(one("not an address"), headers=auth)
    assert bad.status_code == 400 and "email" in bad.json["message"]


# -- GET /subscribers ------------------------------------------------------------------------------


def test_list_walks_by_cursor_in_creation_order(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    emails = [f"walk{i:02d}@example.org" for i in range(7)]
    for email in emails:
        post(newsletter_client, auth, {"email": email})
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth, params=params).json
        seen += [c["email"] for c in page["data"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == emails
    assert pages == 3


def test_exact_multiple_of_limit_has_no_empty_last_page(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    for i in range(4):
        post(newsletter_client, auth, {"email": f"m{i}@example.org"})
    first = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth, params={"limit": 2}).json
    second = newsletter_client.simulate_get(
        SUBSCRIBERS, headers=auth, params={"limit": 2, "cursor": first["next_cursor"]}
    ).json
    assert len(second["data"]) == 2 and second["next_cursor"] is None


def test_default_limit_is_100(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    for i in range(101):
        newsletter_service.subscribers.subscribe({"email": f"d{i}@example.org"})
    page = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth).json
    assert len(page["data"]) == 100 and page["next_cursor"]
    rest = newsletter_client.simulate_get(
        SUBSCRIBERS, headers=auth, params={"cursor": page["next_cursor"]}
    ).json
    assert [c["email"] for c in rest["data"]] == ["d100@example.org"]


def test_status_filter(newsletter_client: Any, auth: dict[str, str]) -> None:
    post(newsletter_client, auth, {"email": "p1@example.org"})
    post(
        newsletter_client,
        auth,
        {
            "email": "c1@example.org",
            "consent": {"source": "x", "collected_at": "2025-01-01T00:00:00Z"},
        },
    )
    post(newsletter_client, auth, {"email": "u1@example.org"})
    patch(newsletter_client, auth, "u1@example.org", {"status": "unsubscribed"})
    for status, expected in [
        ("pending", ["p1@example.org"]),
        ("confirmed", ["c1@example.org"]),
        ("unsubscribed", ["u1@example.org"]),
        ("bounced", []),
    ]:
        page = newsletter_client.simulate_get(
            SUBSCRIBERS, headers=auth, params={"status": status}
        ).json
        assert [c["email"] for c in page["data"]] == expected
        assert page["next_cursor"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("limit=1&limit=2", "limit"),
        ("status=active", "status"),
        ("status=PENDING", "status"),
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=", "cursor"),
        ("cursor=eyJrIjoic3Vic2NyaWJlcnMiLCJhIjotMX0", "cursor"),  # negative id
        ("cursor=" + "eyJrIjoic3Vic2NyaWJlcnMiLCJhIjoxMDAwMDAwMDAwMDAwMDAwMDAwMDAwMH0", "cursor"),
        ("cursor=eyJrIjoiY29udGFjdC1tZXNzYWdlcyIsImEiOjF9", "cursor"),  # another list's cursor
    ],
)
def test_bad_list_query_names_the_parameter(
    newsletter_client: Any, auth: dict[str, str], query: str, field: str
) -> None:
    result = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth, query_string=query)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]


def test_cursor_of_another_status_filter_is_refused(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    for i in range(3):
        post(newsletter_client, auth, {"email": f"s{i}@example.org"})
    page = newsletter_client.simulate_get(
        SUBSCRIBERS, headers=auth, params={"status": "pending", "limit": 1}
    ).json
    result = newsletter_client.simulate_get(
        SUBSCRIBERS, headers=auth, params={"cursor": page["next_cursor"]}
    )
    assert result.status_code == 400 and "cursor" in result.json["message"]


# -- PATCH /subscribers/{email} ------------------------------------------------------------------


def test_patch_subset_null_clears_and_prefs_merge(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    post(
        newsletter_client,
        auth,
        {"email": "pat@example.org", "first_name": "Pat", "zip": "12345", "categories": ["food"]},
    )
    result = patch(
        newsletter_client,
        auth,
        "PAT@example.org",
        {
            "zip": None,
            "last_name": "Doe",
            "prefs": {"email": {"puzzles": "weekly"}},
            "age_range": "65_74",
            "gender": "self_described",
            "gender_self": "two-spirit",
            "categories": ["money", "unknown"],
        },
    )
    assert result.status_code == 200
    contact = result.json
    assert contact["first_name"] == "Pat"  # omitted: unchanged
    assert contact["zip"] is None  # null: cleared
    assert contact["last_name"] == "Doe"
    assert contact["prefs"]["email"] == {
        "briefings": "daily",
        "puzzles": "weekly",
        "onThisDay": "daily",
        "local": "daily",
    }
    assert contact["age_range"] == "65_74"
    assert contact["gender_self"] == "two-spirit"
    assert contact["categories"] == ["money"]
    assert contact["status"] == "pending"
    assert newsletter_client.simulate_get(one("pat@example.org"), headers=auth).json == contact
    # Field edits are not status changes: nothing is queued beyond the signup.
    assert [e["type"] for e in outbox(newsletter_service)] == ["newsletter.signup"]
    cleared = patch(
        newsletter_client, auth, "pat@example.org", {"categories": None, "gender": None}
    )
    assert cleared.json["categories"] == [] and cleared.json["gender_self"] is None


def test_patch_unsubscribe_records_time_and_queues_event(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    post(newsletter_client, auth, {"email": "un@example.org"})
    result = patch(newsletter_client, auth, "un@example.org", {"status": "unsubscribed"})
    assert result.status_code == 200
    assert result.json["status"] == "unsubscribed"
    assert result.json["unsubscribed_at"] is not None
    assert "confirm_url" not in result.json
    [event] = events_of(newsletter_service, "newsletter.unsubscribed")
    assert wire(event["payload"]) == result.content
    again = patch(newsletter_client, auth, "un@example.org", {"status": "unsubscribed"})
    assert again.json["unsubscribed_at"] == result.json["unsubscribed_at"]
    assert len(events_of(newsletter_service, "newsletter.unsubscribed")) == 1
    assert newsletter_client.simulate_get(one("un@example.org"), headers=auth).json == again.json


@pytest.mark.parametrize("status", ["confirmed", "pending", "bounced", "UNSUBSCRIBED", None, 1])
def test_patch_status_other_than_unsubscribed_is_refused(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any, status: Any
) -> None:
    before = post(newsletter_client, auth, {"email": "st@example.org"}).json
    result = patch(newsletter_client, auth, "st@example.org", {"status": status, "zip": "99999"})
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert "status" in result.json["message"]
    assert newsletter_client.simulate_get(one("st@example.org"), headers=auth).json == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "new@example.org"}, "email"),
        ({"created_at": "2025-01-01T00:00:00Z"}, "created_at"),
        ({"confirmed_at": "2025-01-01T00:00:00Z"}, "confirmed_at"),
        ({"confirm_url": "https://x"}, "confirm_url"),
        ({"unsubscribe_url": "https://x"}, "unsubscribe_url"),
        ({"profile_completed_at": "2025-01-01T00:00:00Z"}, "profile_completed_at"),
        ({"nickname": "P"}, "nickname"),
        ({"zip": "abcde"}, "zip"),
        ({"age_range": "over_9000"}, "age_range"),
        ({"gender": "robot"}, "gender"),
        ({"gender_self": "x"}, "gender_self"),
        ({"prefs": None}, "prefs"),
        ({"prefs": {"email": {"briefings": None}}}, "prefs.email.briefings"),
        ({"prefs": {"sms": {"enabled": True}}}, "prefs.sms.enabled"),
        ({"first_name": ["a"]}, "first_name"),
    ],
)
def test_patch_unknown_read_only_or_invalid_field_names_it(
    newsletter_client: Any, auth: dict[str, str], body: dict[str, Any], field: str
) -> None:
    before = post(newsletter_client, auth, {"email": "ro@example.org", "zip": "12345"}).json
    result = patch(newsletter_client, auth, "ro@example.org", body)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]
    assert newsletter_client.simulate_get(one("ro@example.org"), headers=auth).json == before


def test_patch_phone_and_sms(newsletter_client: Any, auth: dict[str, str]) -> None:
    post(newsletter_client, auth, {"email": "sms@example.org"})
    on = patch(
        newsletter_client,
        auth,
        "sms@example.org",
        {"phone": "+44 20 7946 0000", "prefs": {"sms": {"enabled": True}}},
    )
    assert on.json["phone"] == "+44 20 7946 0000"
    assert on.json["prefs"]["email"]["briefings"] == "daily"
    off = patch(newsletter_client, auth, "sms@example.org", {"phone": None})
    assert "phone" not in off.json and off.json["prefs"]["sms"]["enabled"] is False


def test_patch_unknown_subscriber_is_404_and_bad_body_400(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    assert patch(newsletter_client, auth, "none@example.org", {"zip": "12345"}).status_code == 404
    post(newsletter_client, auth, {"email": "b@example.org"})
    bad = newsletter_client.simulate_patch(one("b@example.org"), headers=auth, body="{oops")
    assert bad.status_code == 400 and bad.json["error"] == "invalid_request"


# -- DELETE /subscribers/{email} -----------------------------------------------------------------


def test_erasure_keeps_evidence_discards_events_and_allows_new_signup(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    first = post(newsletter_client, auth, {"email": "Erin@Example.org", "first_name": "Erin"}).json
    patch(newsletter_client, auth, "erin@example.org", {"status": "unsubscribed"})
    post(newsletter_client, auth, {"email": "keep@example.org"})
    newsletter_service.messages.record("erin@example.org", "Erin", "Please call me")
    assert len(outbox(newsletter_service)) == 4

    result = newsletter_client.simulate_delete(one("ERIN@example.org"), headers=auth)
    assert result.status_code == 200
    assert result.json == {
        "deleted": True,
        "email": "erin@example.org",
        "previous_status": "unsubscribed",
    }
    assert newsletter_client.simulate_get(one("erin@example.org"), headers=auth).status_code == 404
    # Every queued event carrying the address is gone; the others stay.
    remaining = outbox(newsletter_service)
    assert [e["type"] for e in remaining] == ["newsletter.signup"]
    assert "erin" not in json.dumps(remaining)
    # Evidence without the plaintext address.
    with newsletter_service.storage.engine.connect() as connection:
        rows = connection.execute(select(deletions)).mappings().all()
    assert len(rows) == 1
    assert "erin" not in json.dumps([dict(r) for r in rows], default=str).lower()
    assert rows[0]["previous_status"] == "unsubscribed"
    assert rows[0]["discarded_events"] == 3
    [evidence] = newsletter_service.subscribers.erasure_evidence("erin@example.org")
    assert evidence.previous_status == "unsubscribed"
    # Erased means gone: the address signs up again as a brand-new subscriber.
    again = post(newsletter_client, auth, {"email": "erin@example.org"})
    assert again.status_code == 201
    assert again.json["first_name"] is None and again.json["status"] == "pending"
    assert again.json["unsubscribe_url"] != first["unsubscribe_url"]
    # The old links are dead.
    old_token = first["unsubscribe_url"].rsplit("/", 1)[1]
    assert newsletter_service.subscribers.find_by_token("unsubscribe", old_token) is None


def test_delete_unknown_is_404_and_bad_address_400(
    newsletter_client: Any, auth: dict[str, str]
) -> None:
    missing = newsletter_client.simulate_delete(one("ghost@example.org"), headers=auth)
    assert missing.status_code == 404 and missing.json["error"] == "not_found"
    bad = newsletter_client.simulate_delete(f"{SUBSCRIBERS}/{quote('no at sign')}", headers=auth)
    assert bad.status_code == 400 and bad.json["error"] == "invalid_request"
