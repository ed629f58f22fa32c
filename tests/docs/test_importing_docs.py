"""docs/importing.md works as written: every ``$ newsletter-connector …`` command of its
walkthroughs runs, in page order, against the test database (through click's runner) and
prints exactly what the page shows; what the prose says each walkthrough stored and queued is
what is stored and queued; the Python example runs standalone; and the page names every mode,
outcome and column the import knows."""

from __future__ import annotations

import shlex
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.service.importing import (
    ACTION_WORDS,
    API_FIELDS,
    CHUNK,
    MODES,
    SOURCE_FIELDS,
)
from tests.support.docblocks import docblock, parse, run_block, settings_environment
from tests.support.paths import ROOT
from tests.support.subscriber_helpers import outbox

DOC = ROOT / "docs" / "importing.md"
#: The spreadsheet walkthrough's files, by the name of the block showing each.
SHEET_FILES = {
    "importing-sheet-readers": "readers.csv",
    "importing-sheet-update": "readers-update.csv",
    "importing-sheet-suppress": "do-not-mail.txt",
    "importing-sheet-customers": "customers.csv",
}


def commands(family: str) -> list[tuple[list[str], list[str]]]:
    """``(argv, output lines)`` of every ``$ `` command in the blocks of ``family``, in page
    order: a command's output is the lines after it, up to the next command or the block's
    end."""
    found: list[tuple[list[str], list[str]]] = []
    for block in parse(DOC):
        if not (block.name or "").startswith(f"{family}:"):
            continue
        assert block.language == "console", block.name
        for line in block.code.splitlines():
            if line.startswith("$ "):
                found.append((shlex.split(line[2:]), []))
            else:
                assert found, f"{block.name}: output before any command"
                found[-1][1].append(line)
    return found


@pytest.fixture
def run_documented(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    """Run a family's commands with the command line on the session database; each must
    print what the page shows (standard output, then any error) and exit 1 exactly when it
    shows an error."""
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }

    def run(family: str, at_least: int) -> None:
        documented = commands(family)
        assert len(documented) >= at_least, family
        for argv, expected in documented:
            assert argv[:3] == ["newsletter-connector", "subscribers", "import"], argv
            result = CliRunner().invoke(cli, argv[1:], env=env, catch_exceptions=False)
            # Off a terminal, click's progress bar writes only its label.
            errors = [
                line for line in result.stderr.splitlines() if line not in ("importing", "checking")
            ]
            assert result.stdout.splitlines() + errors == expected, argv
            failed = any(line.startswith("error: ") for line in expected)
            assert result.exit_code == (1 if failed else 0), (argv, result.output)

    return run


def stored(service: Any, email: str) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.subscribers.get_by_email(email)


def suppression_kind(service: Any, email: str) -> str | None:
    with service.storage.transaction(write=False) as uow:
        found = uow.feedback.suppression(subscriber_key(service.context, email))
    return None if found is None else found.kind


def event_types(service: Any) -> Counter[str]:
    return Counter(event["type"] for event in outbox(service))


# -- the walkthroughs ------------------------------------------------------------------------


def test_listmonk_walkthrough(
    run_documented: Any, newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    run_documented("importing-listmonk", at_least=2)
    service = newsletter_service
    maria = stored(service, "maria.chen@example.org")
    assert (maria.status, maria.first_name, maria.last_name, maria.zip) == (
        "confirmed",
        "Maria",
        "Chen",
        "02139",
    )
    assert maria.consent_source == "listmonk signup form"
    assert maria.consent_collected_at == datetime(2024, 3, 5)
    assert stored(service, "jose.nunez@example.com").phone == "+34 954 000 111"
    tanvir = stored(service, "tanvir@example.net")
    assert (tanvir.first_name, tanvir.last_name) == ("Tanvir", None)
    assert stored(service, "kim.lee@example.com").status == "confirmed"
    assert stored(service, "derek.olsen@example.net") is None
    assert suppression_kind(service, "derek.olsen@example.net") == "unsubscribe"
    for refused in ("chidi.okafor@example.org", "ana.ortiz@example.com", "li.wei@example.net"):
        assert stored(service, refused) is None
    # "eight events are queued, two for each", and one newsletter.unsubscribed.
    assert event_types(service) == Counter(
        {"newsletter.signup": 4, "newsletter.confirmed": 4, "newsletter.unsubscribed": 1}
    )


def test_mailchimp_walkthrough(
    run_documented: Any, newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    run_documented("importing-mailchimp", at_least=4)
    service = newsletter_service
    priya = stored(service, "priya.raman@example.com")
    assert (priya.status, priya.consent_source) == ("confirmed", "Mailchimp signup form")
    assert priya.consent_collected_at == datetime(2021, 9, 14, 16, 5, 10)
    assert stored(service, "lena.fischer@example.net").first_name == "Lena"
    assert stored(service, "marcus.webb@example.com").last_name == "Webb"
    for email in ("derek.olsen@example.net", "r.haddad@example.com", "sam.ito@example.org"):
        assert suppression_kind(service, email) == "unsubscribe"
    for email in ("old.mailbox@example.com", "noreply.typo@example.net"):
        assert suppression_kind(service, email) == "bounce"
    assert event_types(service) == Counter(
        {
            "newsletter.signup": 6,
            "newsletter.confirmed": 6,
            "newsletter.unsubscribed": 3,
            "newsletter.bounced": 2,
        }
    )


def test_mailman_walkthrough(
    run_documented: Any, newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    run_documented("importing-mailman", at_least=3)
    service = newsletter_service
    chidi = stored(service, "chidi.okafor@example.com")
    assert chidi.status == "pending" and chidi.consent_source is None
    assert event_types(service) == Counter({"newsletter.signup": 6})


def test_spreadsheet_walkthrough(
    run_documented: Any, newsletter_service: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for block, name in SHEET_FILES.items():
        (tmp_path / name).write_text(docblock(block), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    run_documented("importing-sheet", at_least=5)
    service = newsletter_service
    ann = stored(service, "ann.lee@example.org")
    assert (ann.status, ann.zip, ann.categories) == ("confirmed", "02140", ("health", "travel"))
    assert (ann.prefs.briefings, ann.prefs.local) == ("weekly", "off")
    assert ann.consent_source == "paper sign-up sheet"
    bo = stored(service, "bo.ray@example.org")
    assert (bo.status, bo.sms_enabled, bo.phone) == ("unsubscribed", True, "+1 617 555 0100")
    assert bo.consent_source == "fair stall"
    assert bo.consent_collected_at == datetime(2025, 6, 14, 15, 0, 0)
    assert stored(service, "cy.diaz@example.org") is None
    assert stored(service, "dee.fox@example.org").consent_collected_at == datetime(2025, 3, 1, 10)
    assert suppression_kind(service, "gone@example.net") == "unsubscribe"
    eve = stored(service, "eve.park@example.org")
    assert (eve.status, eve.first_name, eve.last_name, eve.zip) == (
        "pending",
        "Eve",
        "Park",
        "97205",
    )
    assert event_types(service) == Counter(
        {
            "newsletter.signup": 5,
            "newsletter.confirmed": 3,
            "newsletter.unsubscribed": 2,
        }
    )


def test_python_example(
    newsletter_settings: Any,
    newsletter_storage: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings_environment(monkeypatch, newsletter_settings)
    monkeypatch.chdir(ROOT)
    run_block("importing-python")
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "dry run: 7 lines read, 0 refused, 0 mails",
        "stored up to line 8",
        "added, confirmed: 6",
    ]
    text = DOC.read_text()
    for line in printed:
        assert f"`{line}`" in text, line


# -- the page keeps up with the code ---------------------------------------------------------


def test_the_page_names_every_mode_outcome_and_column() -> None:
    text = DOC.read_text()
    for mode in MODES:
        assert f"`{mode}`" in text, mode
    for words in ACTION_WORDS.values():
        assert f"`{words}`" in text, words
    for name in API_FIELDS:
        assert f"`{name}`" in text, name
    for name in SOURCE_FIELDS:
        assert f"`{name}`" in text, name
    assert f"{CHUNK} lines" in text  # a chunk, one transaction
