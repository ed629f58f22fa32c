"""``newsletter-connector digest``: record one newsletter issue (:meth:`IssueService.run_digest`).

Exit status 0 when an issue was recorded or its daily/weekly period already has one (a note on
stderr: safe in cron on several hosts); 1 with one ``error:`` line on stderr otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from ..errors import InvalidRequest, NewsletterError
from ..model.issue import load_content
from ..service.digest_schedule import ALL_KINDS
from ..service.issues import IssueAlreadyRecorded
from ..settings import SettingsError
from .context import CliState, fail, pass_state


def _read_content(path: Path) -> dict[str, Any]:
    try:
        return load_content(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"--content {path}: cannot read it ({exc.strerror or exc})")
    except UnicodeDecodeError:
        fail(f"--content {path}: not UTF-8 text")
    except InvalidRequest as exc:
        fail(f"--content {path}: {exc.message}")


def _check_writable(path: Path) -> None:
    """Fail, naming ``--preview`` and ``path``, unless ``path`` can be written: an existing
    writable file, or a new one in an existing writable directory. Touches nothing, so a run
    that then fails leaves no empty file behind."""
    parent = path.absolute().parent
    if path.exists():
        problem = None if os.access(path, os.W_OK) else "the file is not writable"
    elif parent.exists() and not parent.is_dir():
        problem = f"{parent} is not a directory"
    elif not parent.is_dir():
        problem = f"directory {parent} does not exist"
    elif not os.access(parent, os.W_OK | os.X_OK):
        problem = f"directory {parent} is not writable"
    else:
        problem = None
    if problem is not None:
        fail(f"--preview {path}: cannot write it ({problem}); nothing was recorded")


@click.command("digest")
@click.option(
    "--kind",
    type=click.Choice(ALL_KINDS),
    required=True,
    help="daily and weekly record once per day / ISO week; manual and test any number of times.",
)
@click.option(
    "--date", "issue_date", metavar="YYYY-MM-DD", help="Issue date (default: today, UTC)."
)
@click.option(
    "--content",
    "content_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON file with briefing, on_this_day, puzzle_hint, topics (and optionally subject), "
    "instead of asking the content plugin.",
)
@click.option(
    "--preview",
    "preview_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the recorded issue's HTML to this file, to open in a browser (checked "
    "writable before anything is recorded).",
)
@pass_state
def digest(
    state: CliState,
    kind: str,
    issue_date: str | None,
    content_file: Path | None,
    preview_file: Path | None,
) -> None:
    """Record one newsletter issue (a digest run) and print what was recorded.

    In connector delivery mode the run also queues a newsletter.issue event for the platform;
    the platform transport never sends a test issue to readers. Needs an https base_url.
    """
    if preview_file is not None:
        _check_writable(preview_file)
    content = _read_content(content_file) if content_file is not None else None
    try:
        state.settings().require_https_links()  # the issue links to the site built from it
        service = state.service()
        record = service.issues.run_digest(kind, issue_date, content)
        state.audit("issue.digest", f"{record.kind} issue {record.id}")
    except IssueAlreadyRecorded as exc:
        click.echo(f"note: {exc.message}", err=True)
        return
    except (NewsletterError, SettingsError) as exc:
        fail(str(exc))
    click.echo(
        f"recorded {record.kind} issue {record.id} for {record.issue_date}: {record.subject}"
    )
    if service.settings.delivery_mode == "connector":
        click.echo("queued newsletter.issue for the platform")
        if record.kind == "test":
            click.echo(
                "test issue: the platform transport settles it without sending it to readers; "
                'the events transport passes it on marked kind "test"'
            )
    if preview_file is not None:
        try:
            preview_file.write_text(record.html or "", encoding="utf-8")
        except OSError as exc:
            fail(f"--preview {preview_file}: cannot write it ({exc.strerror or exc})")
        click.echo(f"preview written to {preview_file}")
