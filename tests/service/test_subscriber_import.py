"""Importing a list: each line obeys the rules of ``POST /subscribers`` (or of a contact change),
consent is explicit, an opted-out address is never made mailable, a dry run stores nothing, and
a repeated import changes nothing and queues nothing."""

from __future__ import annotations

import codecs
import io
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from newsletter_connector.errors import InvalidRequest
from newsletter_connector.plugins.sql_store.tables import outbox_events
from newsletter_connector.service import importing
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.service.importing import (
    ImportOptions,
    ImportSource,
    LineOutcome,
    Provenance,
)
from newsletter_connector.settings import Settings
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.analytics_helpers import clocked_service

NOW = datetime(2026, 11, 20, 9, 0, 0)
CONSENT = Provenance(source="old list signup form", collected_at="2024-01-02T03:04:05Z")


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW)[0]


def run(service: Any, text: str | bytes, dry_run: bool = False, **options: Any) -> Any:
    """Import ``text`` with ``options``; the report and every line's outcome."""
    data = text.encode() if isinstance(text, str) else text
    plan = service.subscriber_import.plan(ImportSource.from_bytes(data), ImportOptions(**options))
    lines: list[LineOutcome] = []
    act = service.subscriber_import.dry_run if dry_run else service.subscriber_import.run
    report = act(plan, on_line=lines.append)
    return report, lines


def stored(service: Any, email: str) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.subscribers.get_by_email(email)


def events_of(service: Any, email: str) -> list[str]:
    with service.storage.transaction(write=False) as uow:
        about = uow.outbox.events_about(subscriber_key(service.context, email), limit=20)
    return [event.event_type for event in reversed(about)]


def event_count(service: Any) -> int:
    with service.storage.engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(outbox_events)))


def subscriber_count(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.subscribers.count())


def add_existing(service: Any, email: str, **fields: Any) -> None:
    with service.storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data(email, created_at=NOW, updated_at=NOW, **fields))


# -- mode add and consent ------------------------------------------------------------------------


def test_lines_with_their_consent_become_confirmed_with_the_signup_events(service: Any) -> None:
    report, lines = run(
        service,
        "email,first_name,zip,categories,prefs.email.briefings,consent_source,consent_collected_at\n"
        "Ann@Example.org,Ann,02139,health;travel;astrology,weekly,spring fair,"
        "2025-05-01T10:00:00Z\n",
    )
    assert lines == [LineOutcome(2, "added")]
    assert report.counts["added"] == 1 and report.mails == 0
    record = stored(service, "ann@example.org")
    assert (record.status, record.first_name, record.zip) == ("confirmed", "Ann", "02139")
    assert record.categories == ("health", "travel")
    assert record.prefs.briefings == "weekly"
    assert record.consent_source == "spring fair"
    assert record.consent_collected_at == datetime(2025, 5, 1, 10, 0, 0)
    assert events_of(service, "ann@example.org") == ["newsletter.signup", "newsletter.confirmed"]


def test_one_provenance_for_the_whole_file_and_a_lines_own_wins(service: Any) -> None:
    report, _ = run(
        service,
        "email,consent_source\nbea@example.org,\ncai@example.org,the shop counter\n",
        provenance=CONSENT,
    )
    assert report.counts["added"] == 2
    assert stored(service, "bea@example.org").consent_source == "old list signup form"
    assert stored(service, "cai@example.org").consent_source == "the shop counter"
    assert stored(service, "cai@example.org").consent_collected_at == datetime(2024, 1, 2, 3, 4, 5)


def test_lines_without_consent_are_refused_unless_imported_as_pending(service: Any) -> None:
    text = "email\nann@example.org\nbob@example.org\n"
    report, lines = run(service, text)
    assert [(line.line, line.action, line.field) for line in lines] == [
        (2, "refused", "consent"),
        (3, "refused", "consent"),
    ]
    assert subscriber_count(service) == 0 and event_count(service) == 0

    report, lines = run(service, text, pending=True)
    assert report.counts["added_pending"] == 2 and report.mails == 2
    assert stored(service, "bob@example.org").status == "pending"
    assert events_of(service, "bob@example.org") == ["newsletter.signup"]


@pytest.mark.parametrize(
    ("columns", "values", "message"),
    [
        ("consent_source", "a form", "consent needs both source and collected_at"),
        ("consent_collected_at", "2024-01-01T00:00:00Z", "consent needs both"),
        ("consent_source,consent_collected_at", "a form,yesterday", "ISO-8601"),
        ("consent_source,consent_collected_at", "a form,2099-01-01T00:00:00Z", "in the future"),
    ],
)
def test_partial_or_wrong_consent_is_refused_as_the_api_refuses_it(
    service: Any, columns: str, values: str, message: str
) -> None:
    _, lines = run(service, f"email,{columns}\nann@example.org,{values}\n", pending=True)
    assert lines[0].action == "refused" and lines[0].field == "consent"
    assert message in (lines[0].reason or "")
    assert subscriber_count(service) == 0


def test_each_field_obeys_the_api_rules_and_the_rest_goes_on(service: Any) -> None:
    _, lines = run(
        service,
        "email,zip,phone,prefs.sms.enabled,age_range,gender,gender_self\n"
        "not-an-address,,,,,,\n"
        "ann@example.org,2139,,,,,\n"
        "bob@example.org,,,yes,,,\n"
        "cai@example.org,,,,old,,\n"
        "dee@example.org,,,,,man,tall\n"
        "eve@example.org,02139,+1 617 555 0100,yes,65_74,self_described,a reader\n",
        provenance=CONSENT,
    )
    assert [(line.line, line.action, line.field) for line in lines] == [
        (2, "refused", "email"),
        (3, "refused", "zip"),
        (4, "refused", "prefs.sms.enabled"),
        (5, "refused", "age_range"),
        (6, "refused", "gender_self"),
        (7, "added", None),
    ]
    eve = stored(service, "eve@example.org")
    assert (eve.sms_enabled, eve.age_range, eve.gender_self) == (True, "65_74", "a reader")
    assert subscriber_count(service) == 1


def test_an_existing_reader_is_left_untouched_by_mode_add(service: Any) -> None:
    add_existing(service, "ann@example.org", status="confirmed", first_name="Ann")
    _report, lines = run(service, "email,first_name\nANN@example.org,Anna\n", provenance=CONSENT)
    assert lines == [LineOutcome(2, "unchanged")]
    assert stored(service, "ann@example.org").first_name == "Ann"
    assert event_count(service) == 0


def test_the_same_address_twice_in_a_file_is_added_once(service: Any) -> None:
    _report, lines = run(service, "email\nann@example.org\nAnn@Example.org\n", provenance=CONSENT)
    assert [line.action for line in lines] == ["added", "unchanged"]
    assert events_of(service, "ann@example.org") == ["newsletter.signup", "newsletter.confirmed"]


# -- never made mailable -----------------------------------------------------------------------


@pytest.mark.parametrize("status", ["unsubscribed", "bounced"])
@pytest.mark.parametrize("mode", ["add", "update", "suppress"])
def test_an_opted_out_reader_is_never_made_mailable(service: Any, status: str, mode: str) -> None:
    add_existing(service, "ann@example.org", status=status)
    consent = {"provenance": CONSENT} if mode == "add" else {}
    run(service, "email,first_name\nann@example.org,Ann\n", mode=mode, **consent)
    assert stored(service, "ann@example.org").status in ("unsubscribed", "bounced")


@pytest.mark.parametrize(
    ("kind", "status"), [("unsubscribe", "unsubscribed"), ("bounce", "bounced")]
)
def test_a_suppressed_address_is_added_as_the_platform_reported_it(
    service: Any, kind: str, status: str
) -> None:
    with service.storage.transaction() as uow:
        uow.feedback.suppress(
            email_hmac=subscriber_key(service.context, "ann@example.org"),
            kind=kind,
            occurred_at=NOW,
            at=NOW,
        )
    _report, lines = run(service, "email\nann@example.org\n", provenance=CONSENT)
    assert lines == [LineOutcome(2, "added_suppressed")]
    assert stored(service, "ann@example.org").status == status
    assert event_count(service) == 0


# -- mode update ---------------------------------------------------------------------------------


def test_mode_update_changes_the_given_fields_and_never_the_status(service: Any) -> None:
    add_existing(service, "ann@example.org", status="pending", first_name="Ann", zip="10001")
    _report, lines = run(
        service,
        "email,zip,last_name,consent_source,consent_collected_at\n"
        "ann@example.org,02139,Lee,a form,2024-01-01T00:00:00Z\n"
        "new@example.org,02139,,,\n",
        mode="update",
    )
    assert [(line.action, line.field) for line in lines] == [
        ("updated", None),
        ("refused", "email"),
    ]
    ann = stored(service, "ann@example.org")
    assert (ann.status, ann.first_name, ann.last_name, ann.zip) == (
        "pending",
        "Ann",
        "Lee",
        "02139",
    )
    assert stored(service, "new@example.org") is None
    assert event_count(service) == 0
    _report, lines = run(service, "email,zip\nann@example.org,02139\n", mode="update")
    assert lines == [LineOutcome(2, "unchanged")]


# -- mode suppress -------------------------------------------------------------------------------


def test_mode_suppress_unsubscribes_readers_and_suppresses_unknown_addresses(service: Any) -> None:
    add_existing(service, "ann@example.org", status="confirmed")
    add_existing(service, "bob@example.org", status="unsubscribed")
    _report, lines = run(
        service,
        "ann@example.org\nbob@example.org\nZed <zed@example.org>\n",
        mode="suppress",
    )
    assert [line.action for line in lines] == ["unsubscribed", "unchanged", "suppressed"]
    assert stored(service, "ann@example.org").status == "unsubscribed"
    assert events_of(service, "ann@example.org") == ["newsletter.unsubscribed"]
    assert events_of(service, "bob@example.org") == []
    assert stored(service, "zed@example.org") is None
    assert events_of(service, "zed@example.org") == ["newsletter.unsubscribed"]
    with service.storage.transaction(write=False) as uow:
        suppression = uow.feedback.suppression(subscriber_key(service.context, "zed@example.org"))
    assert suppression is not None and suppression.kind == "unsubscribe"
    with service.storage.engine.connect() as connection:
        payloads = connection.scalars(
            select(outbox_events.c.payload).where(
                outbox_events.c.subscriber_key == subscriber_key(service.context, "zed@example.org")
            )
        ).all()
    assert payloads == [{"email": "zed@example.org", "status": "unsubscribed"}]

    # Adding the suppressed address later never makes it mailable.
    _, lines = run(service, "email\nzed@example.org\n", provenance=CONSENT)
    assert lines == [LineOutcome(2, "added_suppressed")]
    assert stored(service, "zed@example.org").status == "unsubscribed"


# -- repeat, dry run -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["add", "update", "suppress"])
def test_importing_the_same_file_twice_changes_nothing_the_second_time(
    service: Any, mode: str
) -> None:
    add_existing(service, "old@example.org", status="confirmed")
    text = "email,first_name\nold@example.org,Olga\n" + "".join(
        f"reader{n}@example.org,Reader\n" for n in range(importing.CHUNK + 20)
    )
    consent = {"provenance": CONSENT} if mode == "add" else {}
    run(service, text, mode=mode, **consent)
    events, subscribers = event_count(service), subscriber_count(service)
    with service.storage.transaction(write=False) as uow:
        before = uow.subscribers.list_page(status=None, after_id=None, limit=1000)
    _report, lines = run(service, text, mode=mode, **consent)
    assert {line.action for line in lines} <= {"unchanged", "refused"}
    assert (event_count(service), subscriber_count(service)) == (events, subscribers)
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.list_page(status=None, after_id=None, limit=1000) == before


def test_a_dry_run_says_what_each_line_would_do_and_stores_nothing(service: Any) -> None:
    add_existing(service, "old@example.org", status="confirmed", first_name="Olga")
    text = "email,first_name\nold@example.org,Olga\nnew@example.org,Nell\nbad,Bo\n"
    report, lines = run(service, text, dry_run=True, pending=True)
    assert [(line.line, line.action) for line in lines] == [
        (2, "unchanged"),
        (3, "added_pending"),
        (4, "refused"),
    ]
    assert report.dry_run and report.mails == 1 and report.lines_read == 3
    assert subscriber_count(service) == 1 and event_count(service) == 0
    real, real_lines = run(service, text, pending=True)
    assert real_lines == lines and real.counts == report.counts


# -- files as they come --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "encoding_label"),
    [
        (codecs.BOM_UTF8 + "email;first_name\nann@example.org;José\n".encode(), "byte-order"),
        ("email\tfirst_name\nann@example.org\tJosé\n".encode(), "UTF-8 (detected)"),
        ("email,first_name\r\nann@example.org,José\r\n".encode("latin-1"), "Latin-1 (detected)"),
    ],
)
def test_encodings_and_delimiters_are_found(service: Any, data: bytes, encoding_label: str) -> None:
    plan = service.subscriber_import.plan(
        ImportSource.from_bytes(data), ImportOptions(provenance=CONSENT)
    )
    assert encoding_label in plan.shape.encoding_label
    service.subscriber_import.run(plan)
    assert stored(service, "ann@example.org").first_name == "José"


def test_a_named_encoding_is_used_and_one_the_file_breaks_is_refused(service: Any) -> None:
    data = "email,first_name\nann@example.org,Zoë\n".encode("cp1252")
    _report, _ = run(service, data, encoding="cp1252", provenance=CONSENT)
    assert stored(service, "ann@example.org").first_name == "Zoë"
    with pytest.raises(InvalidRequest) as refused:
        run(service, data, encoding="utf-8", provenance=CONSENT)
    assert refused.value.field == "encoding" and "byte 36" in refused.value.message
    with pytest.raises(InvalidRequest) as unknown:
        run(service, data, encoding="klingon", provenance=CONSENT)
    assert unknown.value.field == "encoding"


def test_quoted_newlines_blank_lines_and_a_malformed_line(service: Any) -> None:
    text = (
        "email,first_name,last_name\n\n"
        'ann@example.org,"Ann\nMarie",Lee\n'
        "\n"
        'bob@example.org,"Bo"b,Ray\n'
        'cai@example.org,Cai,"Smith, Jr"\n'
        "dee@example.org,Dee\n"
    )
    _, lines = run(service, text, provenance=CONSENT)
    assert [(line.line, line.action) for line in lines] == [
        (2, "blank"),
        (3, "refused"),  # a newline is a control character in a name, as in the API
        (5, "blank"),
        (6, "refused"),
        (7, "added"),
        (8, "refused"),
    ]
    assert "a quote inside a field" in (lines[3].reason or "")
    assert "2 fields" in (lines[5].reason or "")
    assert stored(service, "cai@example.org").last_name == "Smith, Jr"


def test_a_file_over_the_size_limit_is_refused_before_anything_is_stored(
    newsletter_settings: Settings, newsletter_storage: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"import_max_bytes": 100})
    service = clocked_service(settings, newsletter_storage, NOW)[0]
    text = "email\n" + "".join(f"reader{n}@example.org\n" for n in range(10))
    with pytest.raises(InvalidRequest) as refused:
        run(service, text, provenance=CONSENT)
    assert refused.value.field == "file" and "100 bytes" in refused.value.message
    assert subscriber_count(service) == 0


def test_unknown_columns_are_reported_not_guessed(service: Any) -> None:
    report, _ = run(
        service, "E-Mail,email,Favourite colour\nx,ann@example.org,blue\n", provenance=CONSENT
    )
    assert report.not_imported == ("E-Mail", "Favourite colour")
    with pytest.raises(InvalidRequest) as refused:
        run(service, "E-Mail,Name\nann@example.org,Ann\n", provenance=CONSENT)
    assert refused.value.field == "columns"
    report, _ = run(
        service,
        "E-Mail,Name\nbob@example.org,Bob\n",
        provenance=CONSENT,
        columns={"E-Mail": "email", "Name": "first_name"},
    )
    assert stored(service, "bob@example.org").first_name == "Bob"


def test_an_unknown_mode_is_refused(service: Any) -> None:
    with pytest.raises(InvalidRequest) as refused:
        run(service, "email\nann@example.org\n", mode="merge")
    assert refused.value.field == "mode"


@pytest.mark.parametrize(
    ("options", "field", "words"),
    [
        ({"mode": "update", "provenance": CONSENT}, "mode", "mode add only"),
        ({"mode": "suppress", "pending": True}, "mode", "mode add only"),
        ({"provenance": Provenance("a form", "yesterday")}, "consent", "ISO-8601"),
        ({"provenance": Provenance("a form", "2099-01-01T00:00:00Z")}, "consent", "future"),
        ({"provenance": Provenance("a form")}, "consent", "time consent was collected"),
        ({"provenance": Provenance(None, "2024-01-01T00:00:00Z")}, "consent", "where consent"),
        ({"provenance": Provenance(" ", "2024-01-01T00:00:00Z")}, "consent", "1 to 200"),
    ],
)
def test_file_wide_consent_no_line_could_use_is_refused_before_any_line(
    service: Any, options: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        run(service, "email,first_name\nann@example.org,Ann\n", **options)
    assert refused.value.field == field and words in refused.value.message
    assert subscriber_count(service) == 0


def test_half_a_provenance_with_a_column_for_the_other_half_is_taken(service: Any) -> None:
    report, _ = run(
        service,
        "email,consent_collected_at\nann@example.org,2024-01-01T00:00:00Z\n",
        provenance=Provenance("the shop counter"),
    )
    assert report.counts["added"] == 1


def test_a_first_line_holding_an_address_is_no_header(service: Any) -> None:
    for options in ({}, {"columns": {"ann@example.org": "email"}}):
        with pytest.raises(InvalidRequest) as refused:
            run(
                service, "ann@example.org,Ann\nbob@example.org,Bob\n", provenance=CONSENT, **options
            )
        assert refused.value.field == "columns" and "@" not in refused.value.message
    assert subscriber_count(service) == 0


def test_a_file_over_one_read_block_counts_its_lines_once(service: Any) -> None:
    from newsletter_connector.service.importing import _files as import_files

    text = "email\n" + "".join(f"r{n}@example.org\n" for n in range(import_files.BLOCK // 15))
    plan = service.subscriber_import.plan(
        ImportSource.from_bytes(text.encode()), ImportOptions(provenance=CONSENT)
    )
    assert len(text) > import_files.BLOCK and plan.shape.lines == text.count("\n")


def test_a_plain_list_may_start_with_a_name_holding_a_comma(service: Any) -> None:
    report, _ = run(
        service,
        "Okafor, Ngozi <ngozi@example.org>\nann@example.org\n",
        provenance=CONSENT,
    )
    assert report.counts["added"] == 2
    ngozi = stored(service, "ngozi@example.org")
    assert (ngozi.first_name, ngozi.last_name) == ("Ngozi", "Okafor")


@pytest.mark.parametrize(
    ("status", "action", "stored_status"),
    [
        ("unsubscribed", "suppressed", None),
        ("bounced", "suppressed", None),
        ("blocklisted", "suppressed", None),
        ("subscribed", "added", "confirmed"),
        ("", "added", "confirmed"),
    ],
)
def test_a_status_column_saying_the_reader_left_suppresses_the_address(
    service: Any, status: str, action: str, stored_status: str | None
) -> None:
    _, lines = run(service, f"email,status\nann@example.org,{status}\n", provenance=CONSENT)
    assert [line.action for line in lines] == [action]
    record = stored(service, "ann@example.org")
    assert (record.status if record else None) == stored_status


def test_an_unknown_status_is_refused_naming_it(service: Any) -> None:
    _, lines = run(service, "email,status\nann@example.org,vip\n", provenance=CONSENT)
    assert (lines[0].action, lines[0].field) == ("refused", "status")
    assert subscriber_count(service) == 0


@pytest.mark.parametrize("mode", ["add", "update", "suppress"])
def test_an_opt_out_needs_only_the_address(service: Any, mode: str) -> None:
    add_existing(service, "ann@example.org", status="confirmed")
    text = (
        "email,zip,phone,status\n"
        "ann@example.org,94110-1234,617-555-0142 ext 3,unsubscribed\n"
        "zed@example.org,1,x,unsubscribed\n"
    )
    _, lines = run(service, text, mode=mode)
    assert [line.action for line in lines] == ["unsubscribed", "suppressed"]
    assert stored(service, "ann@example.org").status == "unsubscribed"


class _FailingStream(io.RawIOBase):
    """A stream of ``data`` that fails once ``good`` bytes are read, as a file on a disk that
    went away would."""

    def __init__(self, data: bytes, good: int) -> None:
        self.data, self.good, self.at = data, good, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.at >= self.good:
            raise OSError("the disk went away")
        piece = self.data[self.at : min(self.at + len(buffer), self.good)]
        buffer[: len(piece)] = piece
        self.at += len(piece)
        return len(piece)


def test_a_file_that_fails_half_way_keeps_every_chunk_read_before_the_failure(
    service: Any,
) -> None:
    """The next chunk is read while the last one's rows are stored: a failure to read it fails
    the import there, after the chunk before it is stored with its events."""
    lines = [
        f"reader{n}@example.org,old list,2024-01-02T03:04:05Z\n"
        for n in range(importing.CHUNK + 100)
    ]
    data = ("email,consent_source,consent_collected_at\n" + "".join(lines)).encode()
    good = len(data) - len("".join(lines[importing.CHUNK + 50 :]))
    opened = []

    def open_stream() -> Any:
        opened.append(True)  # the plan reads the whole file; the import fails half way
        return io.BytesIO(data) if len(opened) == 1 else _FailingStream(data, good)

    plan = service.subscriber_import.plan(ImportSource("readers.csv", open_stream), ImportOptions())
    with pytest.raises(OSError, match="the disk went away"):
        service.subscriber_import.run(plan)
    assert subscriber_count(service) == importing.CHUNK
    assert event_count(service) == 2 * importing.CHUNK
    assert stored(service, f"reader{importing.CHUNK - 1}@example.org") is not None
    assert stored(service, f"reader{importing.CHUNK}@example.org") is None
