"""Importing a list from the admin area (owners only): upload a file, say how to read it (its
columns, the mode, the consent), read what a dry run says each line would do, then import it.
The dry run and the import are jobs the sync runner works through
(:class:`~...service.importing.ImportJobService`); each page shows how far one got, in words.
"""

from __future__ import annotations

from typing import Any

import falcon

from ...errors import InvalidRequest, NotFound
from ...service.importing import (
    ACTION_WORDS,
    ACTIONS,
    FIELD_WORDS,
    MODES,
    TARGETS,
    FileShape,
    ImportOptions,
    ImportSource,
    Provenance,
    header_names_fields,
    import_job_progress,
    inspect,
    opt_out_columns,
    opt_outs_warning,
    refusal_words,
    suggested_targets,
)
from ...storage.import_jobs import ImportJobRecord
from .act import ActCall, Done, posted_id
from .base import AdminPages
from .gate import signed_in
from .paths import IMPORT_CHOOSE, IMPORT_START, IMPORT_STOP, IMPORT_UPLOAD, IMPORTS
from .runner_words import runner_quiet
from .subscriber_words import when

#: The modes, in words: (label, what it does).
MODE_WORDS = {
    "add": (
        "Add new readers",
        "Addresses not on the list are added; readers already on it are left as they are.",
    ),
    "update": (
        "Update readers already on the list",
        "The given details of readers already on the list are changed; their status never is. "
        "Addresses not on the list are refused.",
    ),
    "suppress": (
        "Stop mailing these addresses",
        "Every reader in the file is unsubscribed; an address not on the list is kept from "
        "ever being added as mailable. The platform is told about each.",
    ),
}
ENCODINGS = (
    ("", "Find out from the file (UTF-8, UTF-16, else Latin-1)"),
    ("utf-8", "UTF-8"),
    ("utf-16", "UTF-16 (Excel's Unicode text)"),
    ("latin-1", "Latin-1"),
    ("cp1252", "Windows-1252"),
)
DELIMITERS = (
    ("", "Find out from the first line"),
    (",", "Comma"),
    (";", "Semicolon"),
    ("\t", "Tab"),
)
PHASE_WORDS = {
    "uploaded": "Uploaded: say how to read it, then check it.",
    "checking": "Checking the file (a dry run): nothing is stored yet.",
    "checked": "Checked: this is what importing it would do.",
    "importing": "Importing.",
    "imported": "Imported.",
    "stopped": "Stopped.",
    "discarded": "Discarded.",
}
#: Actions that change nothing.
_NOTHING_DONE = ("refused", "unchanged", "blank")


def import_path(job_id: int) -> str:
    """The app path of an import's page."""
    return f"{IMPORTS}/{job_id}"


def _job(call_service: Any, job_id: int) -> ImportJobRecord:
    try:
        job: ImportJobRecord = call_service.import_jobs.get(job_id)
    except NotFound:
        raise falcon.HTTPNotFound() from None
    return job


# -- the acts ------------------------------------------------------------------------------------


def upload(call: ActCall) -> Done:
    """Store the uploaded file as a new import and open its page. Audited with the file's
    size and line count."""
    if call.upload is None:
        raise InvalidRequest("choose a file to upload", field="file")
    job = call.service.import_jobs.upload(
        call.upload.stream, file_name=call.upload.file_name, requested_by=call.admin.name
    )
    return Done(
        f"import {job.id}",
        redirect_to=import_path(job.id),
        detail=f"{job.size:,} bytes, {job.lines:,} lines",
    )


def upload_refused(call: ActCall, problem: InvalidRequest) -> None:
    """The Import page again with what was wrong with the upload, 400."""
    show_imports(call.pages, call.req, call.resp, error=problem.message, status=falcon.HTTP_400)


def choose(call: ActCall) -> Done:
    """Queue the dry run of the form's import, read with the form's choices."""
    job = _job(call.service, posted_id(call, "job"))
    call.service.import_jobs.choose(job.id, options_from(call))
    return Done(f"import {job.id}", redirect_to=import_path(job.id), detail=_mode_detail(call))


def choose_refused(call: ActCall, problem: InvalidRequest) -> None:
    """The import's page again with the choices as sent and what was wrong, 400."""
    job = _job(call.service, posted_id(call, "job"))
    show_job(
        call.pages,
        call.req,
        call.resp,
        job,
        options=options_from(call),
        error=problem.message,
        error_field=problem.field,
        status=falcon.HTTP_400,
    )


def start(call: ActCall) -> Done:
    """Start importing the form's checked import."""
    job = _job(call.service, posted_id(call, "job"))
    confirmed = call.form.get("confirm_mails") == "yes"
    call.service.import_jobs.start(job.id, by=call.admin.name, mails_confirmed=confirmed)
    counts = ", ".join(f"{n:,} {action}" for action, n in job.counts.items())
    return Done(f"import {job.id}", redirect_to=import_path(job.id), detail=counts[:500])


def start_refused(call: ActCall, problem: InvalidRequest) -> None:
    job = _job(call.service, posted_id(call, "job"))
    show_job(
        call.pages,
        call.req,
        call.resp,
        job,
        error=problem.message,
        error_field=problem.field,
        status=falcon.HTTP_400,
    )


def stop(call: ActCall) -> Done:
    """Stop (or discard) the form's import; its file is forgotten."""
    job = _job(call.service, posted_id(call, "job"))
    ended = call.service.import_jobs.stop(job.id, by=call.admin.name)
    return Done(
        f"import {job.id}",
        flash="Stopped; the file is deleted." if ended else "It had already ended.",
        redirect_to=import_path(job.id),
    )


def options_from(call: ActCall) -> ImportOptions:
    """The choices the form sent: each column's field by the column's name as the page showed
    it (unknown values are left for the service to refuse)."""
    form = call.form
    columns = {}
    for index in range(len(TARGETS) * 10):
        name_field = f"column_name_{index}"
        if not form.has(name_field):
            break
        columns[form.get(name_field)] = form.get(f"column_{index}")
    return ImportOptions(
        mode=form.get("mode") or "add",
        pending=form.get("without_consent") == "pending",
        provenance=Provenance(
            form.get("consent_source").strip() or None,
            form.get("consent_collected_at").strip() or None,
        ),
        encoding=form.get("encoding") or None,
        delimiter=form.get("delimiter") or None,
        columns=columns,
        opt_outs_dropped=form.get("confirm_opt_outs") == "yes",
    )


def _mode_detail(call: ActCall) -> str:
    detail = f"mode {call.form.get('mode') or 'add'}"
    if call.form.get("without_consent") == "pending":
        detail += "; lines without consent as pending"
    if call.form.get("confirm_opt_outs") == "yes":
        detail += "; an opt-out column may be left out (confirmed)"
    return detail


# -- the pages -----------------------------------------------------------------------------------


def _head_shape(
    service: Any, job: ImportJobRecord, options: ImportOptions | None = None
) -> tuple[FileShape, str | None]:
    """The shape of the file's first part (what the columns form shows), and a problem
    reading it with ``options`` (``None``: none). A first line that cannot be read at all
    (a field too long for the CSV reader) gives a shape with no columns, and the problem."""
    head = service.import_jobs.head(job) or b"\n"
    chosen = options or ImportOptions.from_json(job.options)
    source = ImportSource.from_bytes(head, job.file_name)
    try:
        return inspect(
            source, max_bytes=len(head), encoding=chosen.encoding, delimiter=chosen.delimiter
        ), None
    except InvalidRequest as problem:
        try:
            return inspect(source, max_bytes=len(head)), problem.message
        except InvalidRequest as unreadable:
            nothing = ImportSource.from_bytes(b"\n", job.file_name)
            return inspect(nothing, max_bytes=1), unreadable.message


def show_imports(
    pages: AdminPages,
    req: falcon.Request,
    resp: falcon.Response,
    *,
    error: str | None = None,
    status: str = falcon.HTTP_200,
) -> None:
    """The Import page: the upload form and the recent imports."""
    jobs = pages.service.import_jobs.recent(20)
    pages.show(
        req,
        resp,
        signed_in(req),
        "imports.html",
        status=status,
        current="Subscribers",
        error=error,
        upload_url=pages.url(IMPORT_UPLOAD),
        limit=pages.service.settings.import_max_bytes,
        jobs=[
            {
                "url": pages.url(import_path(job.id)),
                "file_name": job.file_name,
                "lines": job.lines,
                "phase": PHASE_WORDS[job.phase],
                "requested": f"{job.requested_by}, {when(job.requested_at)}",
            }
            for job in jobs
        ],
    )


def show_job(
    pages: AdminPages,
    req: falcon.Request,
    resp: falcon.Response,
    job: ImportJobRecord,
    *,
    options: ImportOptions | None = None,
    error: str | None = None,
    error_field: str | None = None,
    status: str = falcon.HTTP_200,
) -> None:
    """One import's page, by its phase: the choices form, the progress of its dry run or
    import, or what it did."""
    chosen = options or ImportOptions.from_json(job.options)
    context: dict[str, Any] = {
        "shape": None,
        "plain": False,
        "columns": [],
        "targets": [],
        "opt_outs": "",
        "consent_needed": "",
    }
    if job.phase in ("uploaded", "checked"):
        context = _choices(pages, job, chosen)
    pages.show(
        req,
        resp,
        signed_in(req),
        "import_job.html",
        status=status,
        current="Subscribers",
        job=_job_words(job),
        error=error,
        error_field=error_field,
        chosen=chosen,
        modes=[(mode, *MODE_WORDS[mode]) for mode in MODES],
        encodings=ENCODINGS,
        delimiters=DELIMITERS,
        choose_url=pages.url(IMPORT_CHOOSE),
        start_url=pages.url(IMPORT_START),
        stop_url=pages.url(IMPORT_STOP),
        page_url=pages.url(import_path(job.id)),
        runner_quiet=runner_quiet(pages.service.runner_status.seen()) if job.worked else None,
        imports_url=pages.url(IMPORTS),
        **context,
    )


def _choices(pages: AdminPages, job: ImportJobRecord, chosen: ImportOptions) -> dict[str, Any]:
    shape, problem = _head_shape(pages.service, job, chosen)
    header = shape.first_fields
    plain = shape.delimiter is None and not header_names_fields(header) and not chosen.columns
    suggested = suggested_targets(header)
    columns = [
        {
            "index": index,
            "name": name,
            "target": chosen.columns.get(name, suggested[index]) or "",
        }
        for index, name in enumerate(header)
    ]
    targets = set() if plain else {str(column["target"]) for column in columns}
    return {
        "shape": {
            "encoding": shape.encoding_label,
            "delimiter": shape.delimiter_label,
            "problem": problem,
        },
        "consent_needed": _consent_needed(targets, chosen),
        "plain": plain,
        "columns": [] if plain else columns,
        "opt_outs": "" if plain else _opt_outs_words(header),
        "targets": [("", "Not imported"), *((t, FIELD_WORDS[t]) for t in TARGETS)],
    }


#: The columns that say when a reader agreed (the API's, and the sources' own times).
_WHEN_TARGETS = frozenset({"consent_collected_at", "confirmed_time", "optin_time"})


def _consent_needed(targets: set[str], chosen: ImportOptions) -> str:
    """What the file lacks for its readers to be added as confirmed, before any dry run:
    where or when they agreed, when no column and no answer for the whole file gives it
    (``""``: nothing lacks, or lines without consent are added as pending)."""
    if chosen.pending:
        return ""
    missing = [
        what
        for what, given in (
            ("where", "consent_source" in targets or chosen.provenance.source),
            ("when", targets & _WHEN_TARGETS or chosen.provenance.collected_at),
        )
        if not given
    ]
    if not missing:
        return ""
    what = " and ".join(missing)
    return (
        f"No column of this file says {what} its readers agreed to get the newsletter, so as "
        f"it stands every line would be refused. Say {what} they agreed for the whole file "
        "under Consent below, or add the lines as pending (the platform mails each one a "
        "confirmation)."
    )


def _opt_outs_words(header: tuple[str, ...]) -> str:
    """What leaving the file's opt-out columns unread would do (``""``: it has none)."""
    marking = opt_out_columns(header)
    if not marking:
        return ""
    which = "it is" if len(marking) == 1 else "they are"
    return f"If {which} set to “Not imported”: {opt_outs_warning(marking)}."


def _job_words(job: ImportJobRecord) -> dict[str, Any]:
    """A job as its page shows it."""
    counts = job.counts
    if job.phase in ("stopped", "discarded"):
        state = f"{PHASE_WORDS[job.phase][:-1]} by {job.stopped_by} at {when(job.finished_at)}."
    elif job.phase == "imported":
        state = f"Imported at {when(job.finished_at)} (started by {job.started_by})."
    elif job.worked and job.started_at is None:
        state = f"{PHASE_WORDS[job.phase]} Waiting for the sync runner to take it up."
    else:
        state = PHASE_WORDS[job.phase]
    shown = sum(_lines_of(refusal) for refusal in job.refusals)
    return {
        "id": job.id,
        "phase": job.phase,
        "file_name": job.file_name,
        "size": job.size,
        "lines": job.lines,
        "requested": f"{job.requested_by} at {when(job.requested_at)}",
        "state": state,
        "worked": job.worked,
        "progress": import_job_progress(job),
        "done": job.done,
        "counts": [
            (ACTION_WORDS[action], counts[action]) for action in ACTIONS if counts.get(action)
        ],
        "checked_counts": _in_words(job.checked_counts),
        "refusals": [_refusal_words(refusal) for refusal in job.refusals],
        "refused_shown": shown,
        "more_refused": max(0, counts.get("refused", 0) - shown),
        "mails": counts.get("added_pending", 0),
        "to_import": sum(n for action, n in counts.items() if action not in _NOTHING_DONE),
        "ended": job.phase in ("imported", "stopped", "discarded"),
        "options": _options_words(job.options),
    }


def _lines_of(refusal: dict[str, Any]) -> int:
    """How many lines of the file a kept refusal covers (a span of lines refused together)."""
    through = refusal.get("through")
    return through - refusal["line"] + 1 if through and through > refusal["line"] else 1


def _refusal_words(refusal: dict[str, Any]) -> dict[str, str]:
    """A kept refusal as the table shows it: its line (or lines), the column and why in words."""
    line, through = refusal["line"], refusal.get("through")
    column, reason = refusal_words(refusal.get("field"), refusal["reason"])
    lines = f"{line} to {through}" if through and through > line else str(line)
    return {"line": lines, "field": column, "reason": reason}


def _in_words(counts: dict[str, int]) -> list[tuple[str, int]]:
    """``(what, how many)`` of each action counted, in :data:`ACTIONS` order."""
    return [(ACTION_WORDS[action], counts[action]) for action in ACTIONS if counts.get(action)]


def _options_words(options: dict[str, Any]) -> list[str]:
    if not options:
        return []
    chosen = ImportOptions.from_json(options)
    words = [MODE_WORDS[chosen.mode][0] if chosen.mode in MODE_WORDS else chosen.mode]
    if chosen.provenance.source or chosen.provenance.collected_at:
        words.append(
            f"consent for lines without their own: {chosen.provenance.source or 'no source'}, "
            f"{chosen.provenance.collected_at or 'no time'}"
        )
    words.append(
        "lines without consent: added as pending (each mailed a confirmation)"
        if chosen.pending
        else "lines without consent: refused"
    )
    return words


class ImportsPage:
    """GET: the upload form and the recent imports."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        show_imports(self.pages, req, resp)


class ImportPage:
    """GET: one import's page (404 for no such import)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response, job_id: int) -> None:
        show_job(self.pages, req, resp, _job(self.pages.service, job_id))
