"""``/admin/issues/compose``: write an issue in a form, section by section, preview it as the
configured renderer renders it, record it as a test issue, then as the real one.

The form starts from the content plugin's content where one is installed (else one blank row
of each list). Its buttons post to the same address: "Preview" renders the draft through
:meth:`IssueService.preview` into a sandboxed frame (recording nothing), and the row buttons add
or remove an on-this-day entry, a topic or a story; none of them changes anything, so none is
audited. "Record as a test issue" and "Record the issue" post to ``/admin/issues/compose/record``
and go through :meth:`IssueService.run_digest`, audited as ``issue.record``. The real issue is
recorded only for content a test issue was recorded from: the test carries a keyed seal of
its content (:meth:`IssueService.draft_seal`), and any change since asks for a new test.
"""

from __future__ import annotations

from typing import Any

import falcon

from ...errors import InvalidRequest, NewsletterError
from ...service.digest_schedule import ALL_KINDS
from ...storage.records import IssueRecord
from .act import ActCall, Done
from .issue_draft import IssueDraft, form_field
from .issues import LABEL, issue_anchor
from .paths import ISSUES, ISSUES_COMPOSE, ISSUES_COMPOSE_RECORD

#: The composer's policy: the preview frame's document (``srcdoc``) takes this page's policy,
#: so it allows the issue's inline styles and https images (its sandbox runs no script).
COMPOSER_POLICY = (
    "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: Kinds the composer records as the real issue (a test is its own button).
REAL_KINDS = tuple(kind for kind in ALL_KINDS if kind != "test")


def show_composer(call: ActCall) -> None:
    """GET: the form, started from the content plugin's content for ``?kind=`` (manual by
    default) where one answers."""
    kind = call.req.get_param("kind") or "manual"
    kind = kind if kind in REAL_KINDS else "manual"
    issues = call.service.issues
    suggested = issues.suggested_content(kind) if issues.content_plugin_installed() else None
    if isinstance(suggested, dict):
        draft = IssueDraft.from_content(kind, "", suggested)
    else:
        draft = IssueDraft(kind=kind)
        draft.change("add-otd")
        draft.change("add-topic")
    _show(call, draft, started_from_plugin=isinstance(suggested, dict))


def work_on_draft(call: ActCall) -> Done:
    """POST: a row button changes the draft; "Preview" renders it. Nothing is recorded."""
    draft = IssueDraft.from_form(call.form)
    change = call.form.get("change")
    if change != "preview":
        draft.change(change)
        return Done(None, answer=lambda: _show(call, draft))
    draft = draft.kept()
    content, problems = draft.content()
    if problems:
        return Done(None, answer=lambda: _show(call, draft, problems=problems, status=400))
    try:
        issue = call.service.issues.preview(draft.kind, draft.date or None, content)
    except NewsletterError as problem:
        refusal = problem  # the except clause unbinds its own name
        return Done(None, answer=lambda: _refused(call, draft, refusal))
    return Done(
        None,
        answer=lambda: _show(
            call, draft, preview=(issue.subject, issue.html), seal=call.form.get("seal")
        ),
    )


def record_composed(call: ActCall) -> Done:
    """POST: record the draft as a test issue (``record`` is ``test``), or as the real issue
    of its kind once a test issue of the same content was recorded.

    :raises NewsletterError: the draft cannot be recorded (the composer again, 400).
    """
    draft = IssueDraft.from_form(call.form).kept()
    content, problems = draft.content()
    if problems:
        field, message = next(iter(problems.items()))
        raise InvalidRequest(message, field=field)
    issues = call.service.issues
    seal = issues.draft_seal(draft.kind, content)
    if call.form.get("record") == "test":
        record = issues.run_digest("test", draft.date or None, content)
        return Done(_target(record), answer=lambda: _show(call, draft, seal=seal, tested=record))
    if draft.kind not in REAL_KINDS:
        raise InvalidRequest("choose the kind of the real issue", field="kind")
    if call.form.get("seal") != seal:
        raise InvalidRequest(
            "record a test issue of this content first: the content changed since the last "
            "test issue, or none was recorded",
            field="record",
        )
    record = issues.run_digest(draft.kind, draft.date or None, content)
    return Done(
        _target(record),
        flash=f"Recorded {_target(record)} for {record.issue_date}: {record.subject}",
        redirect_to=f"{ISSUES}#{issue_anchor(record.id)}",
    )


def record_refused(call: ActCall, problem: NewsletterError) -> None:
    """The composer again (400) with the reason beside its field; nothing recorded."""
    _refused(call, IssueDraft.from_form(call.form).kept(), problem)


def _refused(call: ActCall, draft: IssueDraft, problem: NewsletterError) -> None:
    field = problem.field if isinstance(problem, InvalidRequest) else None
    name = form_field(field) or "content"
    _show(call, draft, problems={name: problem.message}, status=400, seal=call.form.get("seal"))


def _target(record: IssueRecord) -> str:
    return f"{record.kind} issue {record.id}"


def _show(
    call: ActCall,
    draft: IssueDraft,
    *,
    status: int = 200,
    problems: dict[str, str] | None = None,
    preview: tuple[str, str] | None = None,
    seal: str = "",
    tested: IssueRecord | None = None,
    started_from_plugin: bool = False,
) -> None:
    context: dict[str, Any] = {
        "current": LABEL,
        "draft": draft,
        "kinds": REAL_KINDS,
        "problems": problems or {},
        "preview": preview,
        "seal": seal,
        "tested": tested,
        "tested_url": call.pages.url(f"{ISSUES}#{issue_anchor(tested.id)}") if tested else "",
        "started_from_plugin": started_from_plugin,
        "compose_url": call.pages.url(ISSUES_COMPOSE),
        "record_url": call.pages.url(ISSUES_COMPOSE_RECORD),
        "issues_url": call.pages.url(ISSUES),
    }
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "issue_compose.html",
        status=falcon.HTTP_400 if status == 400 else falcon.HTTP_200,
        **context,
    )
    call.resp.set_header("Content-Security-Policy", COMPOSER_POLICY)
