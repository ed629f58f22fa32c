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

Before the service is asked, the draft is checked whole (:func:`draft_problems`): a refused
Preview or record shows every problem at once, in words (:mod:`.issue_problems`), beside its
field and listed at the top with a link to it; nothing is recorded or audited.
"""

from __future__ import annotations

from typing import Any

import falcon

from ...errors import NewsletterError
from ...model.issue import content_problems, date_code
from ...service.digest_schedule import ALL_KINDS
from ...storage.records import IssueRecord
from .act import ActCall, Done
from .issue_draft import IssueDraft
from .issue_problems import (
    DraftRefused,
    FieldProblem,
    content_words,
    issue_date_words,
    kind_words,
    page_order,
    refusal_words,
)
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


def draft_problems(draft: IssueDraft, kinds: tuple[str, ...]) -> list[FieldProblem]:
    """Every problem of ``draft`` (as :meth:`IssueDraft.kept` numbers it), in the page's order:
    the form's own (a year that is not a number, an issue date that is not a date, a kind not
    among ``kinds``; none for empty ``kinds``) and each one the content's validation finds."""
    content, problems = draft.content()
    problems += [content_words(problem) for problem in content_problems(content)]
    if kinds and draft.kind not in kinds:
        problems.append(kind_words())
    date = date_code(draft.date) if draft.date else None
    if date is not None:
        problems.append(issue_date_words(date))
    return sorted(problems, key=lambda problem: page_order(problem.field))


def work_on_draft(call: ActCall) -> Done:
    """POST: a row button changes the draft; "Preview" renders it. Nothing is recorded."""
    draft = IssueDraft.from_form(call.form)
    change = call.form.get("change")
    if change != "preview":
        draft.change(change)
        return Done(None, answer=lambda: _show(call, draft))
    draft = draft.kept()
    problems = draft_problems(draft, ALL_KINDS)
    if problems:
        return Done(None, answer=lambda: _show(call, draft, problems=problems, status=400))
    content, _ = draft.content()
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

    :raises DraftRefused: the draft has problems (every one of them), or is the real issue of
        content no test issue was recorded from.
    :raises NewsletterError: the service refused the run (the composer again, 400).
    """
    draft = IssueDraft.from_form(call.form).kept()
    test = call.form.get("record") == "test"
    problems = draft_problems(draft, () if test else REAL_KINDS)
    if problems:
        raise DraftRefused(problems)
    content, _ = draft.content()
    issues = call.service.issues
    seal = issues.draft_seal(draft.kind, content)
    if test:
        record = issues.run_digest("test", draft.date or None, content)
        return Done(_target(record), answer=lambda: _show(call, draft, seal=seal, tested=record))
    if call.form.get("seal") != seal:
        raise DraftRefused([UNTESTED])
    record = issues.run_digest(draft.kind, draft.date or None, content)
    return Done(
        _target(record),
        flash=f"Recorded {_target(record)} for {record.issue_date}: {record.subject}",
        redirect_to=f"{ISSUES}#{issue_anchor(record.id)}",
    )


#: The real issue asked for without a test issue of the same content.
UNTESTED = FieldProblem(
    "record",
    "Record the issue: record a test issue of this content first; the content changed since "
    "the last test issue, or none was recorded",
)


def record_refused(call: ActCall, problem: NewsletterError) -> None:
    """The composer again (400) with every problem beside its field; nothing recorded."""
    _refused(call, IssueDraft.from_form(call.form).kept(), problem)


def _refused(call: ActCall, draft: IssueDraft, problem: NewsletterError) -> None:
    problems = problem.problems if isinstance(problem, DraftRefused) else [refusal_words(problem)]
    _show(call, draft, problems=problems, status=400, seal=call.form.get("seal"))


def _target(record: IssueRecord) -> str:
    return f"{record.kind} issue {record.id}"


def _show(
    call: ActCall,
    draft: IssueDraft,
    *,
    status: int = 200,
    problems: list[FieldProblem] | None = None,
    preview: tuple[str, str] | None = None,
    seal: str = "",
    tested: IssueRecord | None = None,
    started_from_plugin: bool = False,
) -> None:
    context: dict[str, Any] = {
        "current": LABEL,
        "draft": draft,
        "kinds": REAL_KINDS,
        "problems": _by_field(problems or []),
        "summary": problems or [],
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


def _by_field(problems: list[FieldProblem]) -> dict[str, list[str]]:
    """Each field's problems, for the words beside it."""
    fields: dict[str, list[str]] = {}
    for problem in problems:
        if problem.field is not None:
            fields.setdefault(problem.field, []).append(problem.words)
    return fields
