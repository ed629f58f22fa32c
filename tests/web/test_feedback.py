"""The platform's feedback: ``POST /api/export/feedback`` (bounces, complaints, unsubscribes),
through create_app, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from newsletter_connector.model.feedback import MAX_FEEDBACK_ITEMS
from tests.support.analytics_helpers import TOKEN, client_for, clocked_service, connect
from tests.support.docblocks import docblock
from tests.support.subscriber_helpers import events_of, outbox, post
from tests.web.test_export_endpoints import _same_as_unknown_path

T0 = datetime(2026, 3, 1, 12, 0, 0)
FEEDBACK = "/api/export/feedback"
CONSENT = {"source": "import", "collected_at": "2026-02-01T10:00:00Z"}


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, T0)[0]


@pytest.fixture
def client(service: Any) -> Any:
    return client_for(service)


@pytest.fixture
def auth(service: Any) -> dict[str, str]:
    return connect(service)


def item(n: int | str, kind: str, email: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"fb-{n}",
        "type": kind,
        "email": email,
        "occurred_at": "2026-03-01T11:59:00+01:00",
        **extra,
    }


def send(client: Any, auth: dict[str, str], body: Any) -> Any:
    return client.simulate_post(FEEDBACK, headers=auth, body=json.dumps(body))


def confirmed(service: Any, email: str) -> None:
    service.subscribers.subscribe({"email": email, "consent": CONSENT})


def status(service: Any, email: str) -> str:
    return str(service.subscribers.get(email).status)


def test_each_kind_moves_its_subscriber_once_however_often_it_is_posted(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    for email in ("b@example.org", "c@example.org", "u@example.org"):
        confirmed(service, email)
    batch = [
        item(1, "bounce", "B@example.org", reason="550 5.1.1 user unknown"),
        item(2, "complaint", "c@example.org", reason="abuse report"),
        item(3, "unsubscribe", "u@example.org"),
    ]
    first = send(client, auth, batch)
    assert first.status_code == 200
    assert first.json == {
        "results": [
            {"id": "fb-1", "outcome": "bounced"},
            {"id": "fb-2", "outcome": "unsubscribed"},
            {"id": "fb-3", "outcome": "unsubscribed"},
        ]
    }
    again = send(client, auth, batch)
    assert again.json["results"] == [{"id": f"fb-{n}", "outcome": "duplicate"} for n in (1, 2, 3)]
    assert [status(service, e) for e in ("b@example.org", "c@example.org", "u@example.org")] == [
        "bounced",
        "unsubscribed",
        "unsubscribed",
    ]
    bounced = events_of(service, "newsletter.bounced")
    unsubscribed = events_of(service, "newsletter.unsubscribed")
    assert [event["payload"]["email"] for event in bounced] == ["b@example.org"]
    assert sorted(event["payload"]["email"] for event in unsubscribed) == [
        "c@example.org",
        "u@example.org",
    ]
    assert bounced[0]["payload"]["status"] == "bounced"


def test_the_reason_is_kept_with_the_report(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    confirmed(service, "c@example.org")
    send(client, auth, [item(1, "complaint", "c@example.org", reason="  marked as spam  ")])
    kept = service.feedback.about("C@example.org")
    assert [(i.id, i.kind, i.reason, i.outcome) for i in kept.items] == [
        ("fb-1", "complaint", "marked as spam", "unsubscribed")
    ]
    assert kept.items[0].occurred_at == datetime(2026, 3, 1, 10, 59)  # UTC
    assert kept.items[0].received_at == T0
    assert kept.suppression is None


def test_a_pending_subscriber_bounces_and_the_rest_stay_as_they_are(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    service.subscribers.subscribe({"email": "pending@example.org"})
    confirmed(service, "gone@example.org")
    confirmed(service, "dead@example.org")
    service.subscribers.unsubscribe("gone@example.org")
    service.subscribers.mark_bounced("dead@example.org")
    before = len(outbox(service))
    result = send(
        client,
        auth,
        [
            item(1, "bounce", "pending@example.org"),
            item(2, "bounce", "gone@example.org"),
            item(3, "complaint", "dead@example.org"),
            item(4, "unsubscribe", "dead@example.org"),
        ],
    )
    assert [r["outcome"] for r in result.json["results"]] == [
        "bounced",
        "unchanged",
        "unchanged",
        "unchanged",
    ]
    assert status(service, "pending@example.org") == "bounced"
    assert status(service, "gone@example.org") == "unsubscribed"
    assert status(service, "dead@example.org") == "bounced"
    assert [e["type"] for e in outbox(service)[before:]] == ["newsletter.bounced"]


def test_one_id_twice_in_a_batch_is_applied_once(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    confirmed(service, "b@example.org")
    report = item(1, "bounce", "b@example.org")
    result = send(client, auth, [report, report])
    assert [r["outcome"] for r in result.json["results"]] == ["bounced", "duplicate"]
    assert len(events_of(service, "newsletter.bounced")) == 1


def test_the_documented_example_applies(client: Any, service: Any, auth: dict[str, str]) -> None:
    confirmed(service, "ann@example.org")
    confirmed(service, "bob@example.org")
    result = client.simulate_post(FEEDBACK, headers=auth, body=docblock("feedback-request"))
    assert [r["outcome"] for r in result.json["results"]] == [
        "bounced",
        "unsubscribed",
        "suppressed",
    ]


def test_an_empty_batch_applies_nothing(client: Any, auth: dict[str, str]) -> None:
    result = send(client, auth, [])
    assert result.status_code == 200
    assert result.json == {"results": []}


# -- addresses no subscriber has -------------------------------------------------------------


def test_an_unknown_address_is_suppressed_and_imported_as_reported(
    client: Any, service: Any, auth: dict[str, str], newsletter_settings: Any
) -> None:
    result = send(
        client,
        auth,
        [item(1, "complaint", "spam@example.org"), item(2, "bounce", "dead@example.org")],
    )
    assert [r["outcome"] for r in result.json["results"]] == ["suppressed", "suppressed"]
    assert outbox(service) == []
    suppression = service.feedback.about("spam@example.org").suppression
    assert suppression is not None and suppression.kind == "complaint"

    api = client_for(service)
    key = service.admin.create_api_key("import").key
    headers = {"Authorization": f"Bearer {key}"}
    imported = post(api, headers, {"email": "spam@example.org", "consent": CONSENT})
    assert imported.status_code == 201
    assert imported.json["status"] == "unsubscribed"
    assert imported.json["confirmed_at"] is None
    assert imported.json["unsubscribed_at"] == "2026-03-01T10:59:00Z"
    plain = post(api, headers, {"email": "dead@example.org", "first_name": "Ann"})
    assert plain.status_code == 201
    assert plain.json["status"] == "bounced"
    assert plain.json["first_name"] == "Ann"
    assert outbox(service) == []  # nothing to announce: the platform told us


def test_a_suppressed_reader_signs_up_again_through_double_opt_in(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    send(client, auth, [item(1, "unsubscribe", "back@example.org")])
    result = service.subscribers.subscribe({"email": "back@example.org"}, by_reader=True)
    assert result.created and result.record.status == "pending"
    assert [e["type"] for e in outbox(service)] == ["newsletter.signup"]
    assert service.feedback.about("back@example.org").suppression is not None  # until confirmed
    service.subscribers.confirm_by_token(result.record.confirm_token)
    assert status(service, "back@example.org") == "confirmed"
    assert service.feedback.about("back@example.org").suppression is None


def test_erasure_forgets_the_reports_but_a_late_retry_changes_nothing(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    confirmed(service, "b@example.org")
    report = item(1, "bounce", "b@example.org", reason="550 b@example.org unknown")
    send(client, auth, [report, item(2, "complaint", "x@example.org")])
    service.subscribers.erase("b@example.org")
    service.subscribers.erase_address("x@example.org")
    assert service.feedback.about("b@example.org").items == []
    assert service.feedback.about("x@example.org").suppression is None
    retried = send(client, auth, [report])
    assert retried.json["results"] == [{"id": "fb-1", "outcome": "duplicate"}]
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.get_by_email("b@example.org") is None


# -- bad bodies: a 400 naming the item and field, nothing applied ----------------------------


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "fb-9"}, "item 1: type is required"),
        (
            item(9, "hardbounce", "x@example.org"),
            "item 1: type must be one of bounce, complaint, unsubscribe",
        ),
        (item(9, "bounce", "not-an-address"), "item 1: email is not a valid email address"),
        (
            item(9, "bounce", "x@example.org", occurred_at="2026-03-01T10:00:00"),
            "item 1: occurred_at must be an ISO-8601 timestamp with a time zone",
        ),
        (
            item(9, "bounce", "x@example.org", reason="r" * 1001),
            "item 1: reason must be at most 1000 characters",
        ),
        (item(9, "bounce", "x@example.org", extra=1), "item 1: unknown field extra"),
        (
            {**item(9, "bounce", "x@example.org"), "id": "has space"},
            "item 1: id must be a string of 1 to 200 visible ASCII characters",
        ),
        (
            {**item(9, "bounce", "x@example.org"), "id": 7},
            "item 1: id must be a string of 1 to 200 visible ASCII characters",
        ),
        ("bounce", "item 1 must be a JSON object"),
    ],
)
def test_a_bad_item_is_named_and_nothing_is_applied(
    client: Any, service: Any, auth: dict[str, str], bad: Any, message: str
) -> None:
    confirmed(service, "b@example.org")
    before = outbox(service)
    good = item(1, "bounce", "b@example.org")
    result = send(client, auth, [good, bad, item(2, "complaint", "new@example.org")])
    assert result.status_code == 400
    assert result.json == {"error": "invalid_request", "message": message}
    assert status(service, "b@example.org") == "confirmed"
    assert outbox(service) == before
    assert service.feedback.about("new@example.org").suppression is None
    # The platform fixes the body and retries: now it applies, the good item included.
    fixed = send(client, auth, [good])
    assert fixed.json["results"] == [{"id": "fb-1", "outcome": "bounced"}]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "body is required: a JSON array of feedback items"),
        (b"{not json", "body is not valid JSON"),
        (b'{"id": "fb-1"}', "body must be a JSON array of feedback items"),
        (
            json.dumps([item(n, "bounce", "x@example.org") for n in range(101)]).encode(),
            f"body must hold at most {MAX_FEEDBACK_ITEMS} feedback items, not 101",
        ),
        (b"[" + b" " * (512 * 1024) + b"]", "body must be at most 524288 bytes"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_body(
    client: Any, service: Any, auth: dict[str, str], body: bytes, message: str
) -> None:
    result = client.simulate_post(FEEDBACK, headers=auth, body=body)
    assert result.status_code == 400
    assert result.json == {"error": "invalid_request", "message": message}


def test_a_full_batch_with_long_reasons_fits(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    batch = [
        item(n, "bounce", f"user{n}@example.org", reason="r" * 1000)
        for n in range(MAX_FEEDBACK_ITEMS)
    ]
    result = send(client, auth, batch)
    assert result.status_code == 200
    assert {r["outcome"] for r in result.json["results"]} == {"suppressed"}


def test_unknown_query_parameters_are_refused(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_post(FEEDBACK + "?dry_run=1", headers=auth, body="[]")
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"


# -- authentication, like the export endpoints -----------------------------------------------


@pytest.mark.parametrize("header", [None, "Bearer wrong-token-0123456789", f"Bearer {TOKEN}x"])
def test_without_the_connection_token_it_is_the_unknown_path_404(
    client: Any, service: Any, auth: dict[str, str], header: str | None
) -> None:
    confirmed(service, "b@example.org")
    headers = {} if header is None else {"Authorization": header}
    body = json.dumps([item(1, "bounce", "b@example.org")])
    result = client.simulate_post(FEEDBACK, headers=headers, body=body)
    _same_as_unknown_path(client, result, "POST")
    assert status(service, "b@example.org") == "confirmed"


def test_without_a_connection_it_is_the_unknown_path_404(client: Any, service: Any) -> None:
    body = json.dumps([item(1, "bounce", "b@example.org")])
    headers = {"Authorization": f"Bearer {TOKEN}"}
    _same_as_unknown_path(
        client, client.simulate_post(FEEDBACK, headers=headers, body=body), "POST"
    )


def test_other_methods_with_the_token_are_405(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_get(FEEDBACK, headers=auth)
    assert result.status_code == 405
    assert result.headers["allow"] == "POST"
    status_post = client.simulate_post("/api/export/status", headers=auth, body="[]")
    assert status_post.status_code == 405
    assert status_post.headers["allow"] == "GET"
