"""Erasure is complete: ``DELETE /subscribers/{email}`` and ``newsletter-connector erase EMAIL``
leave nothing of the address in any table (only its keyed hash, in the deletion record, which
notes what was erased)."""

from __future__ import annotations

import io
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import JSON, String, Text, cast, func, select

from newsletter_connector.cli import cli
from newsletter_connector.plugins.sql_store.tables import ALL_TABLES, deletions
from tests.support.subscriber_helpers import MESSAGES, one, outbox, patch, post

ADDRESS = "Erin.Erasure@Example.ORG"
#: What any stored trace of the address contains, in any case and encoding (``%40`` too).
NEEDLE = "erin.erasure"
OTHER = "keep.me@example.org"
COLLECT = "/analytics/collect"
IDS = {"visitor_id": "v_0123456789abcdef", "session_id": "s-0123456789"}


@pytest.fixture
def erase_cli(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    """``newsletter-connector erase`` on the test database, with the service's site secret."""
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(cli, ["erase", *args], env=env, catch_exceptions=False)

    return invoke


def text_columns() -> list[Any]:
    """Every column of every table that can hold text: strings, text and JSON."""
    return [
        column
        for table in ALL_TABLES
        for column in table.columns
        if isinstance(column.type, (String, Text, JSON))
    ]


def traces(service: Any, needle: str) -> dict[str, int]:
    """``table.column`` -> how many rows hold ``needle`` (any case) in that column."""
    found: dict[str, int] = {}
    with service.storage.engine.connect() as connection:
        for column in text_columns():
            count = connection.scalar(
                select(func.count())
                .select_from(column.table)
                .where(func.lower(cast(column, Text)).contains(needle))
            )
            if count:
                found[f"{column.table.name}.{column.name}"] = int(count)
    return found


def deletion_rows(service: Any) -> list[dict[str, Any]]:
    with service.storage.engine.connect() as connection:
        return [dict(r) for r in connection.execute(select(deletions)).mappings()]


def deliver_everything_queued(service: Any) -> int:
    """Freeze and settle as delivered every queued event, as the sync runner would."""
    now = datetime.now()
    with service.storage.transaction() as uow:
        claimed = uow.outbox.claim_batches(
            now=now, lease_until=now + timedelta(minutes=5), batch_size=2, max_batches=100
        )
        return int(uow.outbox.settle_delivered([b.id for b in claimed], at=now))


def test_delete_also_erases_the_contact_messages_and_the_record_notes_it(
    newsletter_client: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    post(newsletter_client, auth, {"email": ADDRESS, "first_name": "Erin"})
    newsletter_service.messages.record(ADDRESS.upper(), "Erin", "Please call me")
    newsletter_service.messages.record(ADDRESS.lower(), None, "And write back")
    newsletter_service.messages.record(OTHER, "Keep", "Not Erin's")
    queued = len([e for e in outbox(newsletter_service) if NEEDLE in json.dumps(e).lower()])
    assert queued == 3  # the signup and the two messages

    result = newsletter_client.simulate_delete(one(ADDRESS), headers=auth)
    assert result.status_code == 200
    assert result.json == {  # the spec's fields, nothing more
        "deleted": True,
        "email": ADDRESS.lower(),
        "previous_status": "pending",
    }
    listed = newsletter_client.simulate_get(MESSAGES, headers=auth).json
    assert [m["email"] for m in listed["data"]] == [OTHER]
    assert traces(newsletter_service, NEEDLE) == {}
    [row] = deletion_rows(newsletter_service)
    assert (row["previous_status"], row["discarded_events"], row["erased_messages"]) == (
        "pending",
        3,
        2,
    )
    [evidence] = newsletter_service.subscribers.erasure_evidence(ADDRESS)
    assert evidence.erased_messages == 2 and evidence.discarded_events == 3


def test_cli_erase_erases_an_address_that_only_wrote_to_us(
    erase_cli: Any, newsletter_service: Any
) -> None:
    newsletter_service.messages.record(ADDRESS, "Erin", "I never subscribed")
    newsletter_service.messages.record(OTHER, None, "Keep this one")
    assert traces(newsletter_service, NEEDLE)

    result = erase_cli(ADDRESS)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "subscriber: none",
        "contact messages: 1 erased",
        "undelivered events: 1 discarded",
        "deletion recorded",
    ]
    assert traces(newsletter_service, NEEDLE) == {}
    assert len(newsletter_service.messages.list_page().items) == 1
    [evidence] = newsletter_service.subscribers.erasure_evidence(ADDRESS)
    assert evidence.previous_status is None
    assert (evidence.erased_messages, evidence.discarded_events) == (1, 1)

    # Nothing left: it still succeeds, and records that the erasure was carried out.
    again = erase_cli(ADDRESS.lower())
    assert again.exit_code == 0
    assert "contact messages: 0 erased" in again.output
    assert len(newsletter_service.subscribers.erasure_evidence(ADDRESS)) == 2


def test_cli_erase_refuses_what_is_not_an_address_and_changes_nothing(
    erase_cli: Any, newsletter_service: Any
) -> None:
    newsletter_service.messages.record(OTHER, None, "Keep this one")
    result = erase_cli("not an address")
    assert result.exit_code == 1
    assert result.output.strip() == "error: email is not a valid email address"
    assert deletion_rows(newsletter_service) == []
    assert len(newsletter_service.messages.list_page().items) == 1
    assert erase_cli().exit_code == 2  # click: the argument is missing


def test_nothing_of_the_address_remains_in_any_table_after_erase(
    erase_cli: Any,
    newsletter_client: Any,
    auth: dict[str, str],
    newsletter_service: Any,
) -> None:
    # The scan reads every table that can hold text (the others hold only ids and times).
    scanned = {column.table.name for column in text_columns()}
    # An upload's file parts are bytes: they are checked below, part by part.
    unscanned = {"nc_analytics_visitors", "nc_job_runs", "nc_import_file_parts"}
    assert {t.name for t in ALL_TABLES} - scanned <= unscanned
    # Everything the service stores about a reader, through its public edges.
    created = post(
        newsletter_client,
        auth,
        {"email": ADDRESS, "first_name": "Erin", "phone": "217 555 0100", "zip": "02139"},
    )
    assert created.status_code == 201
    post(newsletter_client, auth, {"email": OTHER})
    record = newsletter_service.subscribers.get(ADDRESS)
    newsletter_service.subscribers.confirm_by_token(record.confirm_token)
    newsletter_service.messages.record(ADDRESS.upper(), "Erin", f"Write to {ADDRESS}")
    for body in (
        {"type": "pageview", **IDS, "path": f"/u/{ADDRESS}", "referrer": f"https://m/{ADDRESS}"},
        {"type": "link click", **IDS, "path": "/", "href": f"mailto:{ADDRESS}"},
        {"type": "pageview", **IDS, "path": f"/?email={ADDRESS}", "props": {"who": ADDRESS}},
    ):
        newsletter_client.simulate_post(
            COLLECT, body=json.dumps(body), headers={"Content-Type": "application/json"}
        )
    assert deliver_everything_queued(newsletter_service) >= 2  # sent: delivered batches
    patch(newsletter_client, auth, ADDRESS, {"status": "unsubscribed"})  # still queued
    newsletter_service.messages.record(ADDRESS, None, "Once more")
    newsletter_service.admin_audit.record("ada", "subscriber.bounce", ADDRESS.lower())
    waiting = newsletter_service.import_jobs.upload(
        io.BytesIO(f"email\nkeep.me@example.org\n{ADDRESS.upper()}\n".encode()),
        file_name="list.csv",
        requested_by="ada",
    )
    kept = newsletter_service.import_jobs.upload(
        io.BytesIO(b"email\nkeep.me@example.org\n"), file_name="other.csv", requested_by="ada"
    )
    before = traces(newsletter_service, NEEDLE)
    assert {
        "nc_subscribers.email",
        "nc_contact_messages.email",
        "nc_outbox_events.payload",
        "nc_admin_audit.target",
    } <= set(before)
    assert traces(newsletter_service, "keep.me")  # the scan finds what is there

    result = erase_cli(ADDRESS)
    assert result.exit_code == 0, result.output
    assert NEEDLE not in result.output.lower()
    assert result.output.splitlines()[:3] == [
        "subscriber: erased (was unsubscribed)",
        "contact messages: 2 erased",
        "undelivered events: 2 discarded",
    ]
    assert traces(newsletter_service, NEEDLE) == {}
    assert traces(newsletter_service, "keep.me")  # other readers are untouched
    # An upload holding the address is ended and its file deleted; another is kept.
    assert newsletter_service.import_jobs.part(waiting.id, 0) is None
    assert newsletter_service.import_jobs.get(waiting.id).phase == "discarded"
    assert newsletter_service.import_jobs.part(kept.id, 0) is not None
    [row] = deletion_rows(newsletter_service)
    assert row["previous_status"] == "unsubscribed" and row["erased_messages"] == 2
    assert newsletter_client.simulate_get(one(ADDRESS), headers=auth).status_code == 404
