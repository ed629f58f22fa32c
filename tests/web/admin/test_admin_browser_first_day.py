"""The first day, as a newcomer lives it, in a real browser (headless Chromium, JavaScript off)
against the README's own command: ``quickstart`` in an empty folder, its first owner made with
the command it prints (both as docs/first-day.md shows them), then signing in at the address it
prints, importing a small Mailchimp export, unsubscribing a few readers in bulk and recording a
test issue, at a phone's 390 px and a desktop's 1280 px. Every job (the import's dry run, the
import, the bulk act) finishes with nothing but ``quickstart`` running: its sync runner does the
work. The pages on the phone's walk that no other browser test checks in the same state are
checked with :func:`tests.support.screens.check_screens` (at both widths). With
``NEWSLETTER_WRITE_SCREENSHOTS=1`` each walk saves its screenshots,
``docs/images/first-day/*-390.png`` and ``*-1280.png``, for docs/first-day.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.admin import PASSWORD
from tests.support.browser import scriptless_tab
from tests.support.docblocks import docblock
from tests.support.paths import ROOT
from tests.support.screens import check_screens, write_screenshot
from tests.support.servers import running
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.system, pytest.mark.database_independent]

SCREENSHOTS = ROOT / "docs" / "images" / "first-day"
#: Long enough for the runner beside the app to take up a job and finish a tiny one.
JOB_SECONDS = 60


def _export(tag: str) -> bytes:
    """A Mailchimp "subscribed" export cut down to its usual columns: the opt-in times are
    there, but not where the readers agreed, which the page asks for before the dry run."""
    header = '"Email Address","First Name","Last Name",MEMBER_RATING,OPTIN_TIME,CONFIRM_TIME,LEID'
    rows = [
        f'{tag}-priya@example.com,Priya,Raman,4,"2021-09-14 16:02:51","2021-09-14 16:05:10",41',
        f'{tag}-jose@example.org,José,Núñez,3,"2022-01-05 09:00:00","2022-01-05 09:02:00",42',
        f'{tag}-lena@example.net,Lena,Fischer,2,"2020-11-03 10:15:00","2020-11-03 10:16:00",43',
        f'{tag}-marcus@example.com,Marcus,Ford,5,"2019-06-21 22:47:05","2019-06-21 22:49:31",44',
    ]
    return ("\n".join([header, *rows]) + "\n").encode()


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str]]:
    """``newsletter-connector quickstart`` in an empty folder, as the README runs it: its base
    URL, its folder and what it printed once it said the runner runs beside the app."""
    folder = tmp_path_factory.mktemp("first-day")
    log = folder / "quickstart.log"
    env = {"NEWSLETTER_CONFIG": "", "NEWSLETTER_DATABASE_URL": "", "NEWSLETTER_BASE_URL": ""}
    with running(["quickstart"], env=env, cwd=folder, probe_path="/signup", log_path=log) as (
        base,
        _,
    ):
        assert wait_until(lambda: "runs beside the app" in log.read_text(), 30), log.read_text()
        yield base, folder, log.read_text()


def _command(folder: Path, *args: str, stdin: str = "") -> str:
    """A ``newsletter-connector`` command run in ``folder`` (it reads the settings file
    ``quickstart`` left there); its output. Fails with the output when it fails."""
    result = subprocess.run(
        [sys.executable, "-m", "newsletter_connector", *args],
        cwd=folder,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={key: value for key, value in os.environ.items() if not key.startswith("NEWSLETTER_")},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


#: The pages of the walk no other browser test checks in the state the walk shows them: the
#: note about a file's missing consent, and a bulk act's page once it has finished.
UNCHECKED_ELSEWHERE = frozenset({"import-upload", "bulk-done"})


def _shot(browser: Any, page: Any, name: str, width: int) -> None:
    """The page checked at both widths on the phone's walk, if no other test checks it; its
    screenshot at this walk's width for the docs when the variable asks for it."""
    if width == 390 and name in UNCHECKED_ELSEWHERE:
        check_screens(browser, page, f"first day: {name}")
    if os.environ.get("NEWSLETTER_WRITE_SCREENSHOTS") == "1":
        write_screenshot(page, SCREENSHOTS / f"{name}-{width}.png")


def _until(page: Any, done: str) -> str:
    """Follow the job page's "Show the latest progress" link until its text holds ``done``
    (the runner beside the app at work); the page's text."""
    text = ""

    def finished() -> bool:
        nonlocal text
        text = page.locator("main").inner_text()
        if done in text:
            return True
        page.get_by_role("link", name="Show the latest progress").click()
        return False

    assert wait_until(finished, JOB_SECONDS, interval=1.0), text
    return text


@pytest.mark.parametrize("width", [390, 1280])
def test_the_first_day(
    browser: Any, quickstart: tuple[str, Path, str], tmp_path: Path, width: int
) -> None:
    base, folder, printed = quickstart
    tag = f"w{width}"
    owner = f"owner{width}"

    # quickstart printed the lines the docs show: where the admin area is, how to make its
    # first owner, and that the runner runs beside the app.
    admin = re.search(r"^Admin area: (\S+)$", printed, re.MULTILINE)
    assert admin and admin.group(1) == f"{base}/admin", printed
    shown = docblock("first-day-printed").replace("http://127.0.0.1:8000", base)
    assert shown in printed, f"docs/first-day.md no longer shows what quickstart prints:\n{printed}"
    # The docs' command, with this walk's owner, and the password typed in.
    command = docblock("first-day-owner").strip().split()
    assert command[:4] == [".venv/bin/newsletter-connector", "admin", "create-user", "ada"]
    made = _command(folder, *command[1:3], owner, stdin=PASSWORD + "\n" + PASSWORD + "\n")
    assert made.strip() == f"admin user '{owner}' created (owner)"

    export = tmp_path / "subscribed_members_export.csv"
    export.write_bytes(_export(tag))
    with scriptless_tab(browser) as page:
        page.set_viewport_size({"width": width, "height": 900})

        # Sign in at the printed address.
        page.goto(admin.group(1))
        page.get_by_label("Username").fill(owner)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        assert page.locator("h1").inner_text() == "Dashboard"
        assert "No sync runner" not in page.locator("main").inner_text()
        _shot(browser, page, "dashboard", width)

        # Import the Mailchimp export: the page says before the dry run what it lacks.
        page.get_by_role("navigation").get_by_role("link", name="Subscribers").click()
        page.get_by_role("link", name="import a list").click()
        page.get_by_label("The file").set_input_files(str(export))
        page.get_by_role("button", name="Upload").click()
        assert page.locator("h1").inner_text() == "Import: subscribed_members_export.csv"
        assert "5 lines, the first a header" in page.locator("main").inner_text()
        assert page.locator("#consent-needed").is_visible()
        _shot(browser, page, "import-upload", width)
        page.get_by_label("Where they agreed, for lines without their own").fill(
            "Newsletter sign-up form"
        )
        page.get_by_role("button", name="Check it (a dry run)").click()
        checked = _until(page, "Checked: this is what importing it would do.")
        assert "Added, confirmed 4" in " ".join(checked.split())
        _shot(browser, page, "import-checked", width)
        page.get_by_role("button", name="Import 4 lines").click()
        imported = _until(page, "Imported at")
        assert "Waiting for the sync runner" not in imported
        _shot(browser, page, "import-done", width)

        # Unsubscribe a few readers in bulk (those whose last name begins with F), as a job
        # the runner works through.
        page.get_by_role("navigation").get_by_role("link", name="Subscribers").click()
        page.get_by_label("Address begins with").fill(f"{tag}-")
        page.get_by_role("button", name="Show subscribers").click()
        assert page.locator(".count").inner_text() == "4 subscribers match."
        _shot(browser, page, "subscribers", width)
        page.get_by_label("First or last name begins with").fill("F")
        page.get_by_role("button", name="Show subscribers").click()
        page.get_by_role("button", name="Unsubscribe all…").click()
        assert page.locator("h1").inner_text() == "Unsubscribe 2 subscribers?"
        page.get_by_role("button", name="Unsubscribe them").click()
        finished = _until(page, "Finished at")
        assert page.locator("h1").inner_text() == "Unsubscribed 2 subscribers"
        assert "Waiting for the sync runner" not in finished
        _shot(browser, page, "bulk-done", width)
        page.goto(f"{base}/admin/subscribers?address={tag}-&status=unsubscribed&sort=address")
        unsubscribed = page.locator("tbody tr td.key").all_inner_texts()
        assert unsubscribed == [f"{tag}-lena@example.net", f"{tag}-marcus@example.com"]

        # Write an issue and record it as a test.
        page.get_by_role("navigation").get_by_role("link", name="Issues").click()
        page.get_by_role("link", name="Write an issue").click()
        page.get_by_label("Subject").fill(f"Our first issue ({width})")
        briefing = page.get_by_role("group", name="Briefing: the day's lead story")
        briefing.get_by_label("Title").fill("Clinics open late on Thursdays")
        briefing.get_by_label("Link").fill("https://news.example/clinics")
        briefing.get_by_label("Date of the story").fill("2026-03-01")
        page.get_by_role("button", name="Preview").click()
        preview = page.frame_locator("iframe.preview")
        assert "Clinics open late on Thursdays" in preview.locator("body").inner_text()
        _shot(browser, page, "issue-preview", width)
        page.get_by_role("button", name="Record as a test issue").click()
        assert "Recorded test issue" in page.get_by_role("status").inner_text()
        page.get_by_role("navigation").get_by_role("link", name="Issues").click()
        page.wait_for_load_state()
        # The list is read once the page the link opened has loaded, not the one it replaced.
        subjects = page.locator("main h3")
        recorded = f"[TEST] Our first issue ({width})"
        assert wait_until(lambda: recorded in subjects.all_inner_texts(), timeout=10), (
            subjects.all_inner_texts()
        )
