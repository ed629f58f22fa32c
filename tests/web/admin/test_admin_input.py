"""Control characters in admin input: a query parameter, path segment or form field holding a
NUL (or, outside the digest content, any C0 control character or DEL) is a 400 naming the
field, with nothing stored or audited; PostgreSQL would refuse a NUL with a 500 otherwise."""

from __future__ import annotations

import json
from collections.abc import Callable
from html import unescape
from typing import Any

import pytest

from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.web.admin.input import AdminInputRefused, check_fields
from tests.support.admin import audit_acts, get_page, login_attempt, submit

State = Callable[[Any], Any]


def _nothing_stored(service: Any) -> Any:
    return (
        [key.label for key in service.admin.list_api_keys()],
        [user.username for user in service.admin_access.list_users()],
        service.admin.connection(),
        service.admin.listsource_enabled(),
        [issue.id for issue in service.issues.list()],
        audit_acts(service),
    )


@pytest.mark.parametrize("bad", ["\x00", "\x01", "\x7f"], ids=["nul", "soh", "del"])
def test_a_control_character_in_the_login_username_is_a_400_before_any_lookup(
    client: Any, service: Any, admin_user: str, bad: str
) -> None:
    before = audit_acts(service)
    result = login_attempt(client, f"ada{bad}", "correct horse battery")
    assert result.status_code == 400, result.text
    assert "username must not contain control characters" in result.text
    assert "newsletter_admin" not in result.cookies
    assert audit_acts(service) == before  # not even a failed login recorded


@pytest.mark.parametrize(
    ("path", "fields", "form", "named"),
    [
        ("/admin/settings/api-keys", {"label": "crm\x00"}, None, "label"),
        (
            "/admin/settings/admin-users",
            {"username": "bob\x00", "password": "p" * 20, "password_again": "p" * 20},
            None,
            "username",
        ),
        (
            "/admin/settings/admin-users",
            {"username": "bob", "password": "p\x00" * 10, "password_again": "p\x00" * 10},
            None,
            "password",
        ),
        (
            "/admin/settings/connection",
            {
                "platform_base": "https://mail.example.org\x00",
                "transport": "events",
                "token": "platform-token-0123456789",
            },
            None,
            "platform_base",
        ),
        (
            "/admin/settings/connection",
            {
                "platform_base": "https://mail.example.org",
                "transport": "events",
                "token": "platform-token\x00-0123456789",
            },
            None,
            "token",
        ),
        (
            "/admin/settings/list-source",
            {"user": "platform\x00", "key": "list-source-key-0123"},
            "/admin/settings",
            "user",
        ),
        (
            "/admin/settings/list-source",
            {"user": "platform", "key": "list-source\x1b-key-0123"},
            "/admin/settings",
            "key",
        ),
        (
            "/admin/settings/outbox/failed/replay",
            {"batch_id": "b\x00"},
            "/admin/settings/outbox/failed",
            "batch_id",
        ),
        (
            "/admin/subscribers/erase",
            {"email": "a\x00@example.org"},
            "/admin/subscribers",
            "email",
        ),
        (
            "/admin/issues/digest",
            {"kind": "manual", "date": "2026-03-01\x00", "content": ""},
            "/admin/issues",
            "date",
        ),
        (
            "/admin/issues/digest",
            {"kind": "manual", "date": "", "content": json.dumps(sample_issue_content()) + "\x00"},
            "/admin/issues",
            "content",
        ),
        (
            "/admin/issues/digest",
            {"kind": "manual", "date": "", "content": "{\x0c}"},
            "/admin/issues",
            "content",
        ),
    ],
    ids=[
        "api-key-label",
        "admin-username",
        "admin-password",
        "connection-address",
        "connection-token",
        "listsource-user",
        "listsource-key",
        "replay-batch",
        "erase-email",
        "digest-date",
        "digest-content-nul",
        "digest-content-form-feed",
    ],
)
def test_a_control_character_in_an_admin_form_is_a_400_naming_the_field(
    client: Any,
    service: Any,
    session: str,
    path: str,
    fields: dict[str, str],
    form: str | None,
    named: str,
) -> None:
    before = _nothing_stored(service)
    result = submit(client, path, session, fields, form=form)
    assert result.status_code == 400, result.text
    assert f"{named} must not contain control characters" in result.text
    assert _nothing_stored(service) == before


@pytest.mark.parametrize(
    ("path", "named"),
    [
        ("/admin/settings/outbox/failed?after=b%00", "after"),
        ("/admin/subscribers?address=ab%00", "address"),
        ("/admin/subscribers/show?email=a%00%40example.org", "email"),
        ("/admin/subscribers/erase?email=a%01%40example.org", "email"),
        ("/admin/messages?cursor=%00", "cursor"),
        ("/admin/audit?before=1%00", "before"),
        ("/admin/settings/admin-users/delete?username=ada%00", "username"),
        ("/admin/analytics?from=2026-01-01%00", "from"),
        ("/admin/settings/api-keys/1%00/revoke", "key_id"),
        ("/admin/?days%00=30", "'days\\x00'"),
    ],
)
def test_a_control_character_in_a_query_parameter_or_path_is_a_400_naming_it(
    client: Any, service: Any, session: str, path: str, named: str
) -> None:
    before = _nothing_stored(service)
    result = get_page(client, path, session)
    assert result.status_code == 400, result.text
    assert f"{named} must not contain control characters" in unescape(result.text)
    assert _nothing_stored(service) == before


def test_a_signed_out_visitor_is_sent_to_the_login_and_the_area_stays_off_until_configured(
    client: Any, service: Any
) -> None:
    assert client.simulate_get("/admin/subscribers?name=%00").status_code == 404
    service.admin_access.create_user("ada", "correct horse battery")
    signed_out = client.simulate_get("/admin/subscribers?name=%00")
    assert signed_out.status_code == 303 and signed_out.headers["location"].endswith("/login")
    assert client.simulate_get("/admin/login?next=%00").status_code == 400  # the open page


def test_the_digest_content_may_hold_tabs_and_line_breaks() -> None:
    check_fields({"content": ["{\r\n\t}\n"], "kind": "manual"})
    with pytest.raises(AdminInputRefused, match=r"^kind must not"):
        check_fields({"content": "{}", "kind": ["manual", "ma\tnual"]})
    with pytest.raises(AdminInputRefused, match=r"^content must not"):
        check_fields({"content": "{\x00}"})


def test_a_digest_with_a_multi_line_content_is_still_recorded(
    client: Any, service: Any, session: str
) -> None:
    content = json.dumps(sample_issue_content(), indent="\t").replace("\n", "\r\n")
    fields = {"kind": "manual", "date": "", "content": content}
    result = submit(client, "/admin/issues/digest", session, fields, form="/admin/issues")
    assert result.status_code == 303, result.text
    assert len(service.issues.list()) == 1


def test_a_long_control_character_name_is_shortened_in_the_answer() -> None:
    with pytest.raises(AdminInputRefused) as refused:
        check_fields({"x" * 50 + "\x00": ""})
    assert refused.value.message.startswith("'" + "x" * 40 + "...' must not")


@pytest.mark.parametrize(
    ("place", "named"),
    [
        (
            lambda c: c.update(puzzle_hint="a\x00b"),
            "Puzzle (puzzle_hint in the JSON): the puzzle hint holds an invisible character",
        ),
        (
            lambda c: c["topics"][0].update(summary="\x00"),
            "Topic 1 (topics[0].summary in the JSON): the line about it holds an invisible",
        ),
        (
            lambda c: c["briefing"].update(title="T\x00"),
            "Briefing (briefing.title in the JSON): the title holds an invisible character",
        ),
    ],
    ids=["puzzle-hint", "topic-summary", "briefing-title"],
)
def test_a_nul_escaped_in_the_digest_content_json_is_named_not_stored(
    client: Any, service: Any, session: str, place: Callable[[Any], None], named: str
) -> None:
    content = sample_issue_content()
    place(content)
    fields = {"kind": "manual", "date": "", "content": json.dumps(content)}  # as \u0000
    result = submit(client, "/admin/issues/digest", session, fields, form="/admin/issues")
    assert result.status_code == 400, result.text
    assert named in unescape(result.text)
    assert service.issues.list() == []
