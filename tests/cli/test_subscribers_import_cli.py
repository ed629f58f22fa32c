"""``newsletter-connector subscribers import FILE``, through click's runner against the test
database: what it prints (the file, its columns, each refused line by number, the totals, never
an address: the output may be logged), what it stores, the confirmation mails ``--pending``
causes only with ``--yes``, a dry run storing nothing, and the act in the admin audit log."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.cli.context import command_line_actor
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.admin import audit_acts
from tests.support.subscriber_helpers import outbox

CONSENTED = (
    "email,first_name,zip,consent_source,consent_collected_at,Favourite colour\n"
    "Ann@Example.org,Ann,02139,spring fair,2025-05-01T10:00:00Z,blue\n"
    "bob@example.org,Bob,,shop counter,2025-06-02T11:30:00Z,red\n"
    "cai@example.org,Cai,,old form,2024-01-02T03:04:05Z,\n"
)
WITHOUT_CONSENT = (
    "email,first_name,consent_source,consent_collected_at\n"
    "ann@example.org,Ann,spring fair,2025-05-01T10:00:00Z\n"
    "pat@example.org,Pat,,\n"
    "pia@example.org,Pia,,\n"
)
NO_CONSENT_REASON = (
    "No record of where and when they agreed: give both in the line's columns or for the "
    "whole file, or import lines without consent as pending"
)
ADDRESS = re.compile(r"[^\s,;<>\"]+@[^\s,;<>\"]+")


@pytest.fixture
def run(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    """Run the command line on the session database with settings from the environment, as
    ``test_subscribers_cli.py`` does; ``more_env`` adds settings."""
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }

    def invoke(*args: str, **more_env: str) -> Any:
        return CliRunner().invoke(cli, list(args), env={**env, **more_env}, catch_exceptions=False)

    return invoke


@pytest.fixture
def write(tmp_path: Path) -> Any:
    """Write a file to import; its path."""

    def to_file(text: str, name: str = "list.csv") -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return to_file


def stored(service: Any, email: str) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.subscribers.get_by_email(email)


def subscriber_count(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.subscribers.count())


def events_of(service: Any, email: str) -> list[str]:
    """The event types queued about ``email``, oldest first."""
    key = subscriber_key(service.context, email)
    return [event["type"] for event in outbox(service) if event["subscriber_key"] == key]


def output_lines(result: Any) -> list[str]:
    """The command's lines without the progress bar's label (click prints it once on stderr
    when stderr is not a terminal)."""
    return [line for line in result.output.splitlines() if line not in ("importing", "checking")]


def assert_no_address(result: Any, text: str) -> None:
    """Nothing that looks like an address in ``text`` (as written, or in lower case) is in
    the output."""
    addresses = set(ADDRESS.findall(text))
    assert addresses, "the file names no address: the check would check nothing"
    for address in addresses | {address.lower() for address in addresses}:
        assert address not in result.output


def test_a_file_with_consent_imports_and_says_what_it_read_and_did(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    result = run("subscribers", "import", write(CONSENTED))
    assert result.exit_code == 0, result.output
    assert output_lines(result) == [
        "file: columns named as the API's fields; UTF-8 (detected); comma; 4 lines, the first "
        "a header",
        "  column 'email' -> email",
        "  column 'first_name' -> first_name",
        "  column 'zip' -> zip",
        "  column 'consent_source' -> consent_source",
        "  column 'consent_collected_at' -> consent_collected_at",
        "  not imported: 'Favourite colour'",
        "3 lines read after the header; done",
        "  added, confirmed: 3",
    ]
    assert subscriber_count(newsletter_service) == 3
    ann = stored(newsletter_service, "ann@example.org")
    assert (ann.status, ann.first_name, ann.zip) == ("confirmed", "Ann", "02139")
    assert ann.consent_source == "spring fair"
    assert stored(newsletter_service, "bob@example.org").consent_source == "shop counter"
    for email in ("ann@example.org", "bob@example.org", "cai@example.org"):
        assert events_of(newsletter_service, email) == [
            "newsletter.signup",
            "newsletter.confirmed",
        ]
    assert len(outbox(newsletter_service)) == 6
    assert_no_address(result, CONSENTED)

    again = run("subscribers", "import", write(CONSENTED))
    assert again.exit_code == 0, again.output
    assert output_lines(again)[-2:] == [
        "3 lines read after the header; done",
        "  unchanged: 3",
    ]
    assert len(outbox(newsletter_service)) == 6


def test_consent_options_give_the_whole_file_a_provenance(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    path = write("email,consent_source\nann@example.org,\nbob@example.org,the shop counter\n")
    result = run(
        "subscribers",
        "import",
        path,
        "--consent-source",
        "old list signup form",
        "--consent-collected-at",
        "2024-01-02T03:04:05Z",
    )
    assert result.exit_code == 0, result.output
    assert output_lines(result)[-2:] == [
        "2 lines read after the header; done",
        "  added, confirmed: 2",
    ]
    ann = stored(newsletter_service, "ann@example.org")
    assert (ann.status, ann.consent_source) == ("confirmed", "old list signup form")
    assert ann.consent_collected_at.isoformat() == "2024-01-02T03:04:05"
    bob = stored(newsletter_service, "bob@example.org")
    assert bob.consent_source == "the shop counter"  # a line's own wins
    assert bob.consent_collected_at.isoformat() == "2024-01-02T03:04:05"


def test_without_consent_lines_are_refused_by_number_field_and_reason(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    result = run("subscribers", "import", write(WITHOUT_CONSENT))
    assert result.exit_code == 0, result.output
    assert output_lines(result)[1:] == [
        "  column 'email' -> email",
        "  column 'first_name' -> first_name",
        "  column 'consent_source' -> consent_source",
        "  column 'consent_collected_at' -> consent_collected_at",
        f"line 3: refused: Where and when they agreed: {NO_CONSENT_REASON}",
        f"line 4: refused: Where and when they agreed: {NO_CONSENT_REASON}",
        "3 lines read after the header; done",
        "  added, confirmed: 1",
        "  refused: 2",
    ]
    assert subscriber_count(newsletter_service) == 1
    assert_no_address(result, WITHOUT_CONSENT)


def test_pending_without_yes_exits_1_says_how_many_mails_and_stores_nothing(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    path = write(WITHOUT_CONSENT)
    refused = run("subscribers", "import", path, "--pending")
    assert refused.exit_code == 1
    assert refused.stderr == (
        "error: 2 new readers without consent: the platform will mail each one a confirmation "
        "(2 mails). Run again with --yes to import them.\n"
    )
    assert "line " not in refused.output and "done" not in refused.output
    # Not even the line with its own consent: nothing at all.
    assert subscriber_count(newsletter_service) == 0
    assert outbox(newsletter_service) == []
    assert audit_acts(newsletter_service) == []

    confirmed = run("subscribers", "import", path, "--pending", "--yes")
    assert confirmed.exit_code == 0, confirmed.output
    assert output_lines(confirmed)[-4:] == [
        "2 new readers without consent: the platform will mail each one a confirmation (2 mails).",
        "3 lines read after the header; done",
        "  added, confirmed: 1",
        "  added, pending (the platform mails a confirmation): 2",
    ]
    assert subscriber_count(newsletter_service) == 3
    assert stored(newsletter_service, "ann@example.org").status == "confirmed"
    for email in ("pat@example.org", "pia@example.org"):
        assert stored(newsletter_service, email).status == "pending"
        assert events_of(newsletter_service, email) == ["newsletter.signup"]
    assert [event["type"] for event in outbox(newsletter_service)].count("newsletter.signup") == 3
    assert_no_address(confirmed, WITHOUT_CONSENT)


def test_pending_when_every_line_has_consent_needs_no_yes(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    result = run("subscribers", "import", write(CONSENTED), "--pending")
    assert result.exit_code == 0, result.output
    assert "confirmation" not in result.output
    assert output_lines(result)[-1] == "  added, confirmed: 3"
    assert subscriber_count(newsletter_service) == 3


def test_a_dry_run_prints_each_lines_outcome_when_asked_and_stores_nothing(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    with newsletter_service.storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data("old@example.org", status="confirmed"))
    text = (
        "email,first_name,consent_source,consent_collected_at\n"
        "old@example.org,Olga,fair,2025-05-01T10:00:00Z\n"
        "new@example.org,Nell,fair,2025-05-01T10:00:00Z\n"
        "\n"
        "bad@@example.org,Bo,fair,2025-05-01T10:00:00Z\n"
        "pat@example.org,Pat,,\n"
        "two@example.org,too,many,fields,here\n"
    )
    result = run("subscribers", "import", write(text), "--dry-run", "--pending", "--every-line")
    assert result.exit_code == 0, result.output
    assert output_lines(result)[5:] == [
        "line 2: unchanged",
        "line 3: added, confirmed",
        "line 4: blank, skipped",
        "line 5: refused: Email address: Not a valid email address",
        "line 6: added, pending (the platform mails a confirmation)",
        "line 7: refused: The whole line: The line has 5 fields; the first line has 4",
        "6 lines read after the header; nothing stored (dry run)",
        "  added, confirmed: 1",
        "  added, pending (the platform mails a confirmation): 1",
        "  unchanged: 1",
        "  blank, skipped: 1",
        "  refused: 2",
    ]
    assert "--yes" not in result.output  # a dry run mails nobody
    assert subscriber_count(newsletter_service) == 1
    assert outbox(newsletter_service) == []
    assert audit_acts(newsletter_service) == []
    assert_no_address(result, text)


def test_a_dry_run_prints_the_refused_lines_and_the_totals_by_default(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    lines = "".join(f"reader{n}@example.org,fair,2025-05-01T10:00:00Z\n" for n in range(500))
    text = "email,consent_source,consent_collected_at\n" + lines + "late@example.org,fair,\n"
    result = run("subscribers", "import", write(text), "--dry-run")
    assert result.exit_code == 0, result.output
    assert output_lines(result) == [
        "file: columns named as the API's fields; UTF-8 (detected); comma; 502 lines, the "
        "first a header",
        "  column 'email' -> email",
        "  column 'consent_source' -> consent_source",
        "  column 'consent_collected_at' -> consent_collected_at",
        "line 502: refused: Where and when they agreed: Both where and when they agreed are needed",
        "501 lines read after the header; nothing stored (dry run)",
        "  added, confirmed: 500",
        "  refused: 1",
    ]
    assert "checking" in result.stderr.splitlines()  # the progress bar's label


def test_refused_lines_name_their_number_and_field_never_the_address(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    text = (
        "email,zip,prefs.sms.enabled,age_range\n"
        "not-an-address,,,\n"
        "Zoe@Example.org,2139,,\n"
        "yan@example.org,,perhaps,\n"
        "xia@example.org,,,old\n"
        'wes@example.org,"02139,,\n'
    )
    consent = ["--consent-source", "fair", "--consent-collected-at", "2025-05-01T10:00:00Z"]
    result = run("subscribers", "import", write(text), *consent)
    assert result.exit_code == 0, result.output
    refusals = [line for line in output_lines(result) if line.startswith("line ")]
    assert [line.split(": ")[:3] for line in refusals] == [
        ["line 2", "refused", "Email address"],
        ["line 3", "refused", "ZIP code"],
        ["line 4", "refused", "Agreed to text messages (yes or no)"],
        ["line 5", "refused", "Age range"],
        ["line 6", "refused", "The whole line"],
    ]
    assert "A quote opened on line 6 never closes" in refusals[-1]
    assert output_lines(result)[-2:] == ["5 lines read after the header; done", "  refused: 5"]
    assert subscriber_count(newsletter_service) == 0
    assert_no_address(result, text)


def test_a_column_is_mapped_by_the_column_option(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    text = "E-Mail,Name,Notes\nann@example.org,Ann,likes jazz\nbob@example.org,Bob,\n"
    consent = ["--consent-source", "fair", "--consent-collected-at", "2025-05-01T10:00:00Z"]
    unmapped = run("subscribers", "import", write(text), *consent)
    assert unmapped.exit_code == 1
    assert unmapped.stderr == (
        "error: no column holds the email address; name it (columns found: 'E-Mail', 'Name', "
        "'Notes')\n"
    )
    assert subscriber_count(newsletter_service) == 0

    result = run(
        "subscribers",
        "import",
        write(text),
        "--column",
        "E-Mail=email",
        "--column",
        "Name=first_name",
        *consent,
    )
    assert result.exit_code == 0, result.output
    assert output_lines(result)[1:4] == [
        "  column 'E-Mail' -> email",
        "  column 'Name' -> first_name",
        "  not imported: 'Notes'",
    ]
    assert output_lines(result)[-1] == "  added, confirmed: 2"
    assert stored(newsletter_service, "ann@example.org").first_name == "Ann"
    assert stored(newsletter_service, "bob@example.org").first_name == "Bob"


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("E-Mail", "error: --column takes HEADER=FIELD, not 'E-Mail'\n"),
        ("E-Mail=mail", "error: 'mail' is not a field an import takes; one of: email, "),
        ("Mail=email", "error: the file has no column 'Mail'\n"),
    ],
)
def test_a_bad_column_option_exits_1_with_a_clear_message(
    run: Any, write: Any, newsletter_service: Any, column: str, message: str
) -> None:
    path = write("E-Mail\nann@example.org\n")
    result = run("subscribers", "import", path, "--column", column, "--pending", "--yes")
    assert result.exit_code == 1
    assert result.stderr.startswith(message)
    assert result.stdout == ""
    assert subscriber_count(newsletter_service) == 0


def test_a_missing_file_is_refused_by_click(run: Any, tmp_path: Path) -> None:
    result = run("subscribers", "import", str(tmp_path / "nowhere.csv"))
    assert result.exit_code == 2
    assert "does not exist" in result.stderr and "nowhere.csv" in result.stderr


def test_a_file_over_the_size_limit_exits_1_and_stores_nothing(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    path = write(CONSENTED)
    result = run("subscribers", "import", path, NEWSLETTER_IMPORT_MAX_BYTES="100")
    assert result.exit_code == 1
    assert result.output == (
        "error: the file is larger than the limit of 100 bytes (setting import_max_bytes); "
        "nothing was imported\n"
    )
    assert subscriber_count(newsletter_service) == 0
    assert outbox(newsletter_service) == []
    assert audit_acts(newsletter_service) == []
    size = len(CONSENTED.encode())
    at_limit = run("subscribers", "import", path, NEWSLETTER_IMPORT_MAX_BYTES=str(size))
    assert at_limit.exit_code == 0, at_limit.output
    assert subscriber_count(newsletter_service) == 3


def test_the_import_is_audited_once_and_refusals_and_dry_runs_not_at_all(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    run("subscribers", "import", write(WITHOUT_CONSENT), "--dry-run")
    run("subscribers", "import", write(WITHOUT_CONSENT), "--pending")
    assert audit_acts(newsletter_service) == []
    result = run("subscribers", "import", write(CONSENTED))
    assert result.exit_code == 0, result.output
    assert audit_acts(newsletter_service) == [("subscribers.import", "add: 4 lines")]
    (act,) = newsletter_service.admin_audit.latest(5)
    assert act.actor == command_line_actor()
    suppress = run("subscribers", "import", write("ann@example.org\n"), "--mode", "suppress")
    assert suppress.exit_code == 0, suppress.output
    assert audit_acts(newsletter_service) == [
        ("subscribers.import", "suppress: 1 line"),
        ("subscribers.import", "add: 4 lines"),
    ]


def test_mode_suppress_with_a_plain_list(run: Any, write: Any, newsletter_service: Any) -> None:
    with newsletter_service.storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data("ann@example.org", status="confirmed"))
        uow.subscribers.add(make_subscriber_data("bob@example.org", status="unsubscribed"))
    text = "ann@example.org\n\nbob@example.org\nZed Doe <Zed@Example.org>\nnot an address\n"
    result = run("subscribers", "import", write(text, "members.txt"), "--mode", "suppress")
    assert result.exit_code == 0, result.output
    assert output_lines(result) == [
        "file: a plain list, one address per line; UTF-8 (detected); one address per line; 5 lines",
        "line 5: refused: Email address: The line is not an address or Name <address>",
        "5 lines read; done",
        "  unchanged: 1",
        "  unsubscribed: 1",
        "  suppressed (no subscriber; kept from being added as mailable): 1",
        "  blank, skipped: 1",
        "  refused: 1",
    ]
    assert stored(newsletter_service, "ann@example.org").status == "unsubscribed"
    assert stored(newsletter_service, "zed@example.org") is None
    assert events_of(newsletter_service, "ann@example.org") == ["newsletter.unsubscribed"]
    assert events_of(newsletter_service, "bob@example.org") == []
    assert events_of(newsletter_service, "zed@example.org") == ["newsletter.unsubscribed"]
    assert len(outbox(newsletter_service)) == 2
    assert_no_address(result, text)

    # The suppressed address, imported later with consent, is never made mailable.
    later = run(
        "subscribers",
        "import",
        write("email\nzed@example.org\n"),
        "--consent-source",
        "fair",
        "--consent-collected-at",
        "2025-05-01T10:00:00Z",
    )
    assert output_lines(later)[-1] == (
        "  added as the platform reported it (unsubscribed or bounced): 1"
    )
    assert stored(newsletter_service, "zed@example.org").status == "unsubscribed"
    assert len(outbox(newsletter_service)) == 2


def test_a_quote_left_open_names_the_lines_it_swallowed(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    text = (
        "email,first_name\n"
        "ann@example.org,Ann\n"
        "bob@example.org,Bob\n"
        'cy@example.org,"Cy\n'
        "dee@example.org,Dee\n"
        "eve@example.org,Eve\n"
    )
    consent = ["--consent-source", "fair", "--consent-collected-at", "2025-05-01T10:00:00Z"]
    result = run("subscribers", "import", write(text), "--dry-run", "--every-line", *consent)
    assert result.exit_code == 0, result.output
    assert output_lines(result)[-6:] == [
        "line 2: added, confirmed",
        "line 3: added, confirmed",
        "lines 4 to 6: refused: The whole line: A quote opened on line 4 never closes, so "
        "lines 4 to 6 (to the end of the file) could not be read; close the quote and import "
        "the file again",
        "5 lines read after the header; nothing stored (dry run)",
        "  added, confirmed: 2",
        "  refused: 3",
    ]
    assert subscriber_count(newsletter_service) == 0
    assert_no_address(result, text)


def test_leaving_out_an_opt_out_column_needs_ignore_opt_outs(
    run: Any, write: Any, newsletter_service: Any
) -> None:
    text = (
        "Email Address,First Name,UNSUB_TIME\n"
        "ann@example.org,Ann,\n"
        "bob@example.org,Bob,2024-05-01 10:00:00\n"
    )
    path = write(text)
    consent = ["--consent-source", "fair", "--consent-collected-at", "2025-05-01T10:00:00Z"]
    refused = run("subscribers", "import", path, "--column", "UNSUB_TIME=", *consent)
    assert refused.exit_code == 1
    assert (
        "“UNSUB_TIME” marks the readers who unsubscribed, were blocklisted or bounced; not "
        "imported, those readers would be imported as subscribed although they opted out. "
        "Import the column, or confirm that they are to be imported as subscribed (run again "
        "with --ignore-opt-outs)."
    ) in refused.output
    assert subscriber_count(newsletter_service) == 0
    assert audit_acts(newsletter_service) == []

    confirmed = run(
        "subscribers", "import", path, "--column", "UNSUB_TIME=", "--ignore-opt-outs", *consent
    )
    assert confirmed.exit_code == 0, confirmed.output
    assert "  warning: “UNSUB_TIME” marks the readers who unsubscribed" in confirmed.output
    assert output_lines(confirmed)[-2:] == [
        "2 lines read after the header; done",
        "  added, confirmed: 2",
    ]
    assert stored(newsletter_service, "bob@example.org").status == "confirmed"
    assert audit_acts(newsletter_service) == [
        ("subscribers.import", "add: 3 lines; opt-out column left out (--ignore-opt-outs)")
    ]
