"""The sample exports in examples/imports/ import as docs/importing.md says: how many lines do
what, what is stored (names, zips, phones, consent and its time, statuses, suppressions), which
events are queued with which payloads, and that importing a file again changes nothing."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from newsletter_connector.service.events import subscriber_key
from newsletter_connector.service.importing import ImportOptions, ImportSource, Provenance
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.analytics_helpers import clocked_service
from tests.support.paths import ROOT
from tests.support.subscriber_helpers import outbox

NOW = datetime(2026, 11, 20, 9, 0, 0)
SAMPLES = ROOT / "examples" / "imports"
LISTMONK = SAMPLES / "listmonk-subscribers.csv"
SUBSCRIBED = SAMPLES / "mailchimp-subscribed.csv"
UNSUBSCRIBED = SAMPLES / "mailchimp-unsubscribed.csv"
CLEANED = SAMPLES / "mailchimp-cleaned.csv"
MAILMAN = SAMPLES / "mailman-members.txt"
#: The provenance the walkthroughs give on the command line.
LISTMONK_CONSENT = Provenance(source="listmonk signup form", collected_at="2024-03-05T00:00:00Z")
MAILCHIMP_CONSENT = Provenance(source="Mailchimp signup form")
MAILMAN_CONSENT = Provenance(
    source="news@lists.example.org members", collected_at="2025-01-01T00:00:00Z"
)


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW)[0]


def run(service: Any, source: Any, dry_run: bool = False, **options: Any) -> Any:
    """Import ``source`` (a path, or bytes) with ``options``: the report and
    ``{line: (action, field)}``."""
    from_file = (
        ImportSource.from_bytes(source)
        if isinstance(source, bytes)
        else ImportSource.from_path(source)
    )
    importer = service.subscriber_import
    plan = importer.plan(from_file, ImportOptions(**options))
    lines: dict[int, tuple[str, str | None]] = {}
    act = importer.dry_run if dry_run else importer.run
    report = act(
        plan,
        on_line=lambda outcome: lines.__setitem__(outcome.line, (outcome.action, outcome.field)),
    )
    return report, lines


def counts(report: Any) -> dict[str, int]:
    return {action: count for action, count in report.counts.items() if count}


def stored(service: Any, email: str) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.subscribers.get_by_email(email)


def subscriber_count(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.subscribers.count())


def suppression_kind(service: Any, email: str) -> str | None:
    with service.storage.transaction(write=False) as uow:
        found = uow.feedback.suppression(subscriber_key(service.context, email))
    return None if found is None else found.kind


def events(service: Any) -> list[tuple[str, str]]:
    """``(type, address)`` of every queued event, oldest first."""
    return [(event["type"], event["payload"]["email"]) for event in outbox(service)]


def add_existing(service: Any, email: str, **fields: Any) -> None:
    with service.storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data(email, created_at=NOW, updated_at=NOW, **fields))


def assert_again_changes_nothing(service: Any, source: Any, **options: Any) -> None:
    """Importing the file a second time: every line unchanged (or refused again), nothing
    stored, nothing queued."""
    before = (outbox(service), subscriber_count(service))
    report, _ = run(service, source, **options)
    assert set(counts(report)) <= {"unchanged", "refused"}
    assert (outbox(service), subscriber_count(service)) == before


# -- listmonk ----------------------------------------------------------------------------------


def test_listmonk_export(service: Any) -> None:
    report, lines = run(service, LISTMONK, provenance=LISTMONK_CONSENT)
    assert counts(report) == {"added": 4, "suppressed": 1, "refused": 3}
    assert lines == {
        2: ("added", None),
        3: ("added", None),
        4: ("suppressed", None),  # blocklisted
        5: ("added", None),
        6: ("refused", "status"),  # disabled
        7: ("added", None),
        8: ("refused", "zip"),  # "94110-1234"
        9: ("refused", "zip"),  # 8540
    }
    assert report.lines_read == 8  # the header is not counted
    assert report.not_imported == ("uuid", "created_at", "updated_at")
    assert report.unread_attributes == ("age", "city", "consent", "plan", "tags")

    maria = stored(service, "maria.chen@example.org")
    assert (maria.status, maria.first_name, maria.last_name, maria.zip) == (
        "confirmed",
        "Maria",
        "Chen",
        "02139",
    )
    assert (maria.consent_source, maria.consent_collected_at) == (
        "listmonk signup form",
        datetime(2024, 3, 5),
    )
    jose = stored(service, "jose.nunez@example.com")
    assert (jose.first_name, jose.last_name, jose.phone) == ("José", "Núñez", "+34 954 000 111")
    tanvir = stored(service, "tanvir@example.net")
    assert (tanvir.first_name, tanvir.last_name) == ("Tanvir", None)
    assert stored(service, "kim.lee@example.com").first_name == "Kim"
    assert subscriber_count(service) == 4
    assert suppression_kind(service, "derek.olsen@example.net") == "unsubscribe"

    added = (
        "maria.chen@example.org",
        "jose.nunez@example.com",
        "tanvir@example.net",
        "kim.lee@example.com",
    )
    assert Counter(events(service)) == Counter(
        [(kind, email) for email in added for kind in ("newsletter.signup", "newsletter.confirmed")]
        + [("newsletter.unsubscribed", "derek.olsen@example.net")]
    )
    told = [event for event in outbox(service) if event["type"] == "newsletter.unsubscribed"]
    assert told[0]["payload"] == {"email": "derek.olsen@example.net", "status": "unsubscribed"}

    assert_again_changes_nothing(service, LISTMONK, provenance=LISTMONK_CONSENT)


def test_listmonk_export_without_consent_adds_no_one_but_still_suppresses(service: Any) -> None:
    report, lines = run(service, LISTMONK)
    assert counts(report) == {"suppressed": 1, "refused": 7}
    assert {lines[line] for line in (2, 3, 5, 7)} == {("refused", "consent")}
    assert subscriber_count(service) == 0
    assert events(service) == [("newsletter.unsubscribed", "derek.olsen@example.net")]


def test_listmonk_export_in_mode_update(service: Any) -> None:
    """Names split (``Okafor, Chidi`` the other way round), attributes read, the status kept;
    a ``disabled`` reader updated; a ``blocklisted`` one unsubscribed; addresses nobody has
    refused; no event but the unsubscribe."""
    add_existing(service, "chidi.okafor@example.org", status="confirmed")
    add_existing(service, "maria.chen@example.org", status="pending")
    add_existing(service, "derek.olsen@example.net", status="confirmed")
    report, lines = run(service, LISTMONK, mode="update")
    assert counts(report) == {"updated": 2, "unsubscribed": 1, "refused": 5}
    assert (lines[2], lines[4], lines[6]) == (
        ("updated", None),
        ("unsubscribed", None),
        ("updated", None),
    )
    assert {lines[line] for line in (3, 5, 7)} == {("refused", "email")}
    chidi = stored(service, "chidi.okafor@example.org")
    assert (chidi.first_name, chidi.last_name, chidi.status) == ("Chidi", "Okafor", "confirmed")
    maria = stored(service, "maria.chen@example.org")
    assert (maria.first_name, maria.zip, maria.status) == ("Maria", "02139", "pending")
    assert stored(service, "derek.olsen@example.net").status == "unsubscribed"
    assert events(service) == [("newsletter.unsubscribed", "derek.olsen@example.net")]


# -- Mailchimp ---------------------------------------------------------------------------------


def test_mailchimp_subscribed_file(service: Any) -> None:
    report, lines = run(service, SUBSCRIBED, provenance=MAILCHIMP_CONSENT)
    assert counts(report) == {"added": 6}
    # Marcus Webb's NOTES run over lines 5 and 6: his line is 5, the next 7.
    assert sorted(lines) == [2, 3, 4, 5, 7, 8]
    assert report.lines_read == 7  # the header is not; Marcus Webb's record is two
    assert "Address" in report.not_imported and "TAGS" in report.not_imported
    consent_times = {
        "priya.raman@example.com": datetime(2021, 9, 14, 16, 5, 10),  # CONFIRM_TIME
        "jose.nunez@example.org": datetime(2022, 5, 30, 8, 41, 17),
        "lena.fischer@example.net": datetime(2020, 11, 3, 10, 15, 0),  # no OPTIN_TIME
        "marcus.webb@example.com": datetime(2019, 6, 21, 22, 49, 31),
        "ngozi.okafor@example.org": datetime(2023, 10, 2, 11, 34, 9),
        "t.nguyen@example.net": datetime(2024, 6, 18, 7, 5, 33),
    }
    for email, collected_at in consent_times.items():
        record = stored(service, email)
        assert record.status == "confirmed", email
        assert (record.consent_source, record.consent_collected_at) == (
            "Mailchimp signup form",
            collected_at,
        ), email
    priya = stored(service, "priya.raman@example.com")
    assert (priya.first_name, priya.last_name, priya.phone, priya.zip) == (
        "Priya",
        "Raman",
        "617-555-0142",
        None,  # the zip inside Address is not picked out
    )
    jose = stored(service, "jose.nunez@example.org")
    assert (jose.first_name, jose.last_name) == ("José", "Núñez")
    nguyen = stored(service, "t.nguyen@example.net")
    assert (nguyen.first_name, nguyen.last_name) == (None, None)
    assert Counter(kind for kind, _ in events(service)) == Counter(
        {"newsletter.signup": 6, "newsletter.confirmed": 6}
    )
    assert_again_changes_nothing(service, SUBSCRIBED, provenance=MAILCHIMP_CONSENT)


def test_mailchimp_subscribed_file_needs_a_consent_source(service: Any) -> None:
    report, lines = run(service, SUBSCRIBED, pending=True)
    assert counts(report) == {"refused": 6}
    assert set(lines.values()) == {("refused", "consent")}
    assert subscriber_count(service) == 0 and events(service) == []


def test_mailchimp_optin_time_is_the_consent_time_without_a_confirm_time(service: Any) -> None:
    data = SUBSCRIBED.read_bytes().replace(b'"2021-09-14 16:05:10"', b"")
    run(service, data, provenance=MAILCHIMP_CONSENT)
    assert stored(service, "priya.raman@example.com").consent_collected_at == datetime(
        2021, 9, 14, 16, 2, 51
    )


@pytest.mark.parametrize("mode", ["add", "update", "suppress"])
def test_mailchimp_unsubscribed_and_cleaned_files_suppress_in_every_mode(
    service: Any, mode: str
) -> None:
    report, _ = run(service, UNSUBSCRIBED, mode=mode)
    assert counts(report) == {"suppressed": 3}
    report, _ = run(service, CLEANED, mode=mode)
    assert counts(report) == {"suppressed": 2}
    assert subscriber_count(service) == 0
    for email in ("derek.olsen@example.net", "r.haddad@example.com", "sam.ito@example.org"):
        assert suppression_kind(service, email) == "unsubscribe", email
    for email in ("old.mailbox@example.com", "noreply.typo@example.net"):
        assert suppression_kind(service, email) == "bounce", email
    assert events(service) == [
        ("newsletter.unsubscribed", "derek.olsen@example.net"),
        ("newsletter.unsubscribed", "r.haddad@example.com"),
        ("newsletter.unsubscribed", "sam.ito@example.org"),
        ("newsletter.bounced", "old.mailbox@example.com"),
        ("newsletter.bounced", "noreply.typo@example.net"),
    ]
    payloads = [event["payload"] for event in outbox(service)]
    assert payloads[0] == {"email": "derek.olsen@example.net", "status": "unsubscribed"}
    assert payloads[-1] == {"email": "noreply.typo@example.net", "status": "bounced"}
    assert_again_changes_nothing(service, UNSUBSCRIBED, mode=mode)
    assert_again_changes_nothing(service, CLEANED, mode=mode)


def test_mailchimp_opted_out_files_move_readers_already_stored(service: Any) -> None:
    """An unsubscribed line unsubscribes a reader of any status; a cleaned line bounces a
    pending or confirmed reader and leaves an unsubscribed one as it is."""
    add_existing(service, "derek.olsen@example.net", status="confirmed")
    add_existing(service, "r.haddad@example.com", status="unsubscribed")
    add_existing(service, "sam.ito@example.org", status="bounced")
    add_existing(service, "old.mailbox@example.com", status="pending")
    add_existing(service, "noreply.typo@example.net", status="unsubscribed")
    _, lines = run(service, UNSUBSCRIBED)
    assert lines == {2: ("unsubscribed", None), 3: ("unchanged", None), 4: ("unsubscribed", None)}
    _, lines = run(service, CLEANED)
    assert lines == {2: ("bounced", None), 3: ("unchanged", None)}
    statuses = {
        email: stored(service, email).status
        for email in (
            "derek.olsen@example.net",
            "r.haddad@example.com",
            "sam.ito@example.org",
            "old.mailbox@example.com",
            "noreply.typo@example.net",
        )
    }
    assert statuses == {
        "derek.olsen@example.net": "unsubscribed",
        "r.haddad@example.com": "unsubscribed",
        "sam.ito@example.org": "unsubscribed",
        "old.mailbox@example.com": "bounced",
        "noreply.typo@example.net": "unsubscribed",
    }
    assert events(service) == [
        ("newsletter.unsubscribed", "derek.olsen@example.net"),
        ("newsletter.unsubscribed", "sam.ito@example.org"),
        ("newsletter.bounced", "old.mailbox@example.com"),
    ]
    # The full contact goes out, as for any status change.
    assert outbox(service)[0]["payload"]["status"] == "unsubscribed"
    assert "unsubscribe_url" in outbox(service)[0]["payload"]


def test_mailchimp_files_in_either_order_leave_no_one_mailable(service: Any) -> None:
    """The unsubscribed file first, then its lines as subscribed lines (its UNSUB_TIME left
    out, as the owner confirmed): each is stored as it was reported, unsubscribed, and nothing
    is queued for it."""
    run(service, UNSUBSCRIBED)
    queued = len(outbox(service))
    left_out = {"columns": {"UNSUB_TIME": ""}, "opt_outs_dropped": True}
    report, _ = run(service, UNSUBSCRIBED, provenance=MAILCHIMP_CONSENT, **left_out)
    assert counts(report) == {"added_suppressed": 3}
    for email in ("derek.olsen@example.net", "r.haddad@example.com", "sam.ito@example.org"):
        assert stored(service, email).status == "unsubscribed", email
    assert len(outbox(service)) == queued


# -- GNU Mailman 3 -----------------------------------------------------------------------------


def test_mailman_members_without_consent_are_refused(service: Any) -> None:
    report, lines = run(service, MAILMAN)
    assert counts(report) == {"refused": 6}
    assert set(lines.values()) == {("refused", "consent")}
    assert subscriber_count(service) == 0 and events(service) == []


def test_mailman_members_as_pending(service: Any) -> None:
    dry, _ = run(service, MAILMAN, dry_run=True, pending=True)
    assert (counts(dry), dry.mails) == ({"added_pending": 6}, 6)
    assert subscriber_count(service) == 0 and events(service) == []

    report, lines = run(service, MAILMAN, pending=True)
    assert counts(report) == {"added_pending": 6} and report.mails == 6
    assert sorted(lines) == [1, 2, 3, 4, 5, 6]
    addresses = [
        "aisha.bello@example.org",
        "bob.kowalski@example.net",
        "chidi.okafor@example.com",  # Chidi.Okafor@example.com in the file
        "jose.nunez@example.com",
        "ngozi.okafor@example.org",
        "zed@example.net",
    ]
    names = {
        "aisha.bello@example.org": ("Aisha", "Bello"),
        "bob.kowalski@example.net": (None, None),
        "chidi.okafor@example.com": ("Chidi", "Okafor"),
        "jose.nunez@example.com": ("José", "Núñez"),
        "ngozi.okafor@example.org": ("Ngozi", "Okafor"),  # "Okafor, Ngozi" in the file
        "zed@example.net": (None, None),
    }
    for email in addresses:
        record = stored(service, email)
        assert (record.status, record.consent_source) == ("pending", None), email
        assert (record.first_name, record.last_name) == names[email], email
    assert events(service) == [("newsletter.signup", email) for email in addresses]
    assert_again_changes_nothing(service, MAILMAN, pending=True)


def test_mailman_members_with_a_provenance(service: Any) -> None:
    report, _ = run(service, MAILMAN, provenance=MAILMAN_CONSENT)
    assert counts(report) == {"added": 6}
    record = stored(service, "ngozi.okafor@example.org")
    assert (record.status, record.consent_source, record.consent_collected_at) == (
        "confirmed",
        "news@lists.example.org members",
        datetime(2025, 1, 1),
    )
    assert Counter(kind for kind, _ in events(service)) == Counter(
        {"newsletter.signup": 6, "newsletter.confirmed": 6}
    )
    assert_again_changes_nothing(service, MAILMAN, provenance=MAILMAN_CONSENT)


def test_mailman_members_in_mode_suppress(service: Any) -> None:
    """``mailman members --nomail any`` output, imported to suppress: readers unsubscribed,
    the others suppressed."""
    add_existing(service, "aisha.bello@example.org", status="confirmed")
    report, lines = run(service, MAILMAN, mode="suppress")
    assert counts(report) == {"unsubscribed": 1, "suppressed": 5}
    assert lines[1] == ("unsubscribed", None)
    assert suppression_kind(service, "chidi.okafor@example.com") == "unsubscribe"
    assert subscriber_count(service) == 1
    assert len(events(service)) == 6
