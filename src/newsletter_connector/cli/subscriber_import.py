"""``newsletter-connector subscribers import FILE``: bring an existing list (docs/importing.md).

What it prints names lines by their number, never an address (the output may be logged)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from ..errors import InvalidRequest
from ..service import NewsletterService
from ..service.importing import (
    ACTION_WORDS,
    MODES,
    SOURCE_LABELS,
    ImportOptions,
    ImportPlan,
    ImportReport,
    ImportSource,
    LineOutcome,
    Progress,
    Provenance,
    dropped_opt_outs,
    iter_actions,
    opt_outs_warning,
    refusal_words,
)
from .context import CliState, fail, pass_state, reports_errors

_DELIMITERS = {"comma": ",", "semicolon": ";", "tab": "\t"}


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="add",
    show_default=True,
    help="add: new addresses only; update: change the given fields of existing readers; "
    "suppress: every address unsubscribed or, when unknown, suppressed.",
)
@click.option("--consent-source", help="Where consent was collected, for lines without their own.")
@click.option(
    "--consent-collected-at",
    help="When consent was collected (ISO-8601 with a zone), for lines without their own.",
)
@click.option(
    "--pending",
    is_flag=True,
    help="Import lines without consent as pending: the platform mails each a confirmation.",
)
@click.option("--yes", is_flag=True, help="Confirm the confirmation mails --pending causes.")
@click.option(
    "--ignore-opt-outs",
    is_flag=True,
    help="Confirm that a column marking opt-outs (listmonk's status, Mailchimp's UNSUB_TIME or "
    "CLEAN_TIME) is not imported: the readers it marks are imported as subscribed.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Say what importing would do (the totals and the refused lines); store nothing.",
)
@click.option(
    "--every-line",
    is_flag=True,
    help="Print what each line does (or would do, with --dry-run), not only the refused ones.",
)
@click.option(
    "--encoding",
    help="The file's encoding: utf-8, utf-16 (with a byte-order mark), latin-1 or windows-1252 "
    "(default: detected, UTF-16 by its byte-order mark, else UTF-8, else Latin-1).",
)
@click.option(
    "--delimiter",
    type=click.Choice(sorted(_DELIMITERS)),
    help="Between fields (default: found from the first line).",
)
@click.option(
    "--column",
    "columns",
    multiple=True,
    metavar="HEADER=FIELD",
    help="Read column HEADER as FIELD (empty: not at all); repeatable.",
)
@pass_state
@reports_errors
def subscribers_import(
    state: CliState,
    file: str,
    mode: str,
    consent_source: str | None,
    consent_collected_at: str | None,
    pending: bool,
    yes: bool,
    ignore_opt_outs: bool,
    dry_run: bool,
    every_line: bool,
    encoding: str | None,
    delimiter: str | None,
    columns: tuple[str, ...],
) -> None:
    """Import the subscribers in FILE (CSV, or one address per line): each line obeys the
    rules of POST /subscribers. Importing a file again changes nothing; an import stopped half
    way finishes when started again. Recorded in the audit log as it starts. Exit status 1
    when the file or an option is refused, when --pending would cause confirmation mails
    and --yes is not given, or when a column marking opt-outs is not imported and
    --ignore-opt-outs is not given."""
    service = state.service()
    options = ImportOptions(
        mode=mode,
        pending=pending,
        provenance=Provenance(source=consent_source, collected_at=consent_collected_at),
        encoding=encoding,
        delimiter=_DELIMITERS[delimiter] if delimiter else None,
        columns=_chosen_columns(columns),
        opt_outs_dropped=ignore_opt_outs,
    )
    importer = service.subscriber_import
    try:
        plan = importer.plan(ImportSource.from_path(file), options)
    except InvalidRequest as exc:
        if exc.field != "confirm_opt_outs":
            raise
        fail(f"{exc.message} (run again with --ignore-opt-outs).")
    _describe(plan)
    on_line = _print_line if every_line else _print_refusal
    if dry_run:
        with _progress(plan, "checking") as progress:
            report = importer.dry_run(plan, on_line=on_line, progress=progress)
        _summarise(plan, report)
        return
    if pending:
        _confirm_mails(service, plan, yes)
    # Audited before the first chunk commits: a run stopped half way has still been recorded.
    detail = f"{mode}: {_counted(plan.shape.lines, 'line')}"
    if dropped_opt_outs(plan.columns) and mode != "suppress":
        detail += "; opt-out column left out (--ignore-opt-outs)"
    state.audit("subscribers.import", detail)
    with _progress(plan, "importing") as progress:
        report = importer.run(plan, on_line=on_line, progress=progress)
    _summarise(plan, report)


def _counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: "1 line", "2 lines"."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _chosen_columns(columns: tuple[str, ...]) -> dict[str, str]:
    chosen = {}
    for item in columns:
        header, sep, field = item.partition("=")
        if not sep:
            fail(f"--column takes HEADER=FIELD, not {item!r}")
        chosen[header] = field.strip()
    return chosen


def _describe(plan: ImportPlan) -> None:
    shape, columns = plan.shape, plan.columns
    header = "" if columns.source == "plain" else ", the first a header"
    click.echo(
        f"file: {SOURCE_LABELS[columns.source]}; {shape.encoding_label}; "
        f"{shape.delimiter_label}; {_counted(shape.lines, 'line')}{header}"
    )
    for header, field in columns.mapped:
        click.echo(f"  column {header!r} -> {field}")
    if columns.not_imported:
        quoted = ", ".join(repr(name) for name in columns.not_imported)
        click.echo(f"  not imported: {quoted}")
    dropped = dropped_opt_outs(columns)
    if dropped and plan.options.mode != "suppress":
        click.echo(f"  warning: {opt_outs_warning(dropped)} (--ignore-opt-outs)")


def _confirm_mails(service: NewsletterService, plan: ImportPlan, yes: bool) -> None:
    """Count the confirmation mails first: without --yes, none may be caused."""
    mails = service.subscriber_import.dry_run(plan).mails
    if not mails:
        return
    message = (
        f"{_counted(mails, 'new reader')} without consent: the platform will mail each one a "
        f"confirmation ({_counted(mails, 'mail')})"
    )
    if not yes:
        fail(f"{message}. Run again with --yes to import them.")
    click.echo(f"{message}.")


@contextmanager
def _progress(plan: ImportPlan, label: str) -> Iterator[Progress]:
    """A progress bar over the file's lines on stderr (off a terminal, ``click`` draws no bar,
    only its ``label`` once)."""
    with click.progressbar(length=plan.shape.lines, label=label, file=sys.stderr) as bar:
        done = 0

        def advance(line: int) -> None:
            nonlocal done
            bar.update(line - done)
            done = line

        yield advance


def _print_line(outcome: LineOutcome) -> None:
    if outcome.action == "refused":
        _print_refusal(outcome)
    else:
        click.echo(f"line {outcome.line}: {ACTION_WORDS[outcome.action]}")


def _print_refusal(outcome: LineOutcome) -> None:
    """A refused line, its column and why in words; lines refused together by their span."""
    if outcome.action != "refused":
        return
    column, reason = refusal_words(outcome.field, outcome.reason or "")
    if outcome.through is not None and outcome.through > outcome.line:
        lines = f"lines {outcome.line} to {outcome.through}"
    else:
        lines = f"line {outcome.line}"
    click.echo(f"{lines}: refused: {column}: {reason}")


def _summarise(plan: ImportPlan, report: ImportReport) -> None:
    done = "nothing stored (dry run)" if report.dry_run else "done"
    after = "" if plan.columns.source == "plain" else " after the header"
    click.echo(f"{_counted(report.lines_read, 'line')} read{after}; {done}")
    for action, count in iter_actions(report):
        click.echo(f"  {ACTION_WORDS[action]}: {count:,}")
    if report.unread_attributes:
        click.echo(f"  attributes not imported: {', '.join(report.unread_attributes)}")
