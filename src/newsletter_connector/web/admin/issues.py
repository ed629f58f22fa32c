"""``/admin/issues``: the recorded issues, newest first, 20 to a page (``?before=<id>``: the
issues older than that one), each previewed in a sandboxed frame, and "Record a digest": a
kind (test by default), an optional date (today, UTC, by default) and optional content as JSON
(else the content plugin is asked), recorded through :meth:`IssueService.run_digest` as
``newsletter-connector digest --kind KIND --date DATE --content FILE`` does, the JSON read by
the same :func:`~newsletter_connector.model.issue.load_content`.
A refused run (a daily or weekly issue already recorded for that period, no content plugin and
no content, content that is not JSON, too large or not valid issue content, a bad date or kind)
shows the form again with the reason and what was typed; nothing is recorded. Content that is
JSON but not valid issue content is refused with every problem, each in words saying where it
is on the composer's terms and in the JSON (:func:`.issue_problems.json_words`).

The preview answers the stored HTML under a ``sandbox`` Content-Security-Policy (no scripts,
its own opaque origin, nothing loaded but https/data images and inline styles), framed by the
issues page only.
"""

from __future__ import annotations

from typing import Any

import falcon

from ...errors import InvalidRequest, NewsletterError, NotFound
from ...model.issue import content_problems, load_content
from ...service.digest_schedule import ALL_KINDS
from ...storage.outbox_records import SubscriberEventRecord
from ..bodies import MAX_BODY_BYTES
from ..pages.forms import FormData
from ..pages.rendering import SECURITY_HEADERS
from .act import ActCall, Done
from .base import AdminPages
from .gate import Admin, signed_in
from .issue_problems import json_words
from .paging import before_param, page_back
from .paths import ISSUES, ISSUES_COMPOSE, ISSUES_DIGEST
from .subscriber_words import event_words

#: Issues listed (each with its preview), newest first.
LIST_LIMIT = 20
#: What the page is called in the navigation.
LABEL = "Issues"
#: The kind the digest form starts with: the one the platform never sends to readers.
DEFAULT_KIND = "test"
#: The largest "Content (JSON)" accepted, in UTF-8 bytes: as large as a JSON API body.
MAX_CONTENT_BYTES = MAX_BODY_BYTES
#: The digest form's body cap: the largest content even if every byte is percent-encoded
#: (three characters each), and room for the other fields.
MAX_DIGEST_FORM_BYTES = 3 * MAX_CONTENT_BYTES + 4096
#: The longest date echoed back into the form.
MAX_DATE_ECHO = 20
#: The issues page's own policy, allowing frames from this origin (the previews).
PAGE_POLICY = SECURITY_HEADERS["Content-Security-Policy"] + "; frame-src 'self'"
#: The preview's headers: a sandboxed document that only the admin pages may frame.
PREVIEW_HEADERS = {
    "Content-Security-Policy": (
        "sandbox; default-src 'none'; img-src https: data:; style-src 'unsafe-inline'"
    ),
    "X-Frame-Options": "SAMEORIGIN",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Robots-Tag": "noindex, nofollow",
}


def preview_path(issue_id: int) -> str:
    """The app path of an issue's preview."""
    return f"{ISSUES}/{issue_id}/preview"


def issue_anchor(issue_id: int) -> str:
    """The id of an issue's heading on the issues page (its preview follows it)."""
    return f"issue-{issue_id}"


def read_content(text: str) -> dict[str, Any] | None:
    """The "Content (JSON)" field: ``None`` when blank (the content plugin is asked), else
    the JSON object :func:`load_content` reads.

    :raises InvalidRequest: naming ``content``: over :data:`MAX_CONTENT_BYTES`, or as
        :func:`load_content` raises it.
    """
    if not text.strip():
        return None
    size = len(text.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidRequest(
            f"the content must be at most {MAX_CONTENT_BYTES} bytes of JSON "
            f"({MAX_CONTENT_BYTES // 1024} KiB); it has {size}",
            field="content",
        )
    return load_content(text)


def _form_field(error: NewsletterError | None) -> str | None:
    """The form field a refused run is about: ``kind``, ``date``, ``content`` (any other field
    :meth:`IssueService.run_digest` names is one of the content's: ``subject``,
    ``sections.topics[0].url``, an unknown key) or None (``issue_renderer``, a missing plugin)."""
    field = error.field if isinstance(error, InvalidRequest) else None
    if field is None or field == "issue_renderer":
        return None
    return field if field in ("kind", "date") else "content"


def _error_words(error: NewsletterError, content: str) -> list[str]:
    """Why a run was refused: for content that is JSON but not valid issue content, each of
    its problems in words (:func:`json_words`); else the service's own sentence."""
    if _form_field(error) != "content" or getattr(error, "field", None) == "content":
        return [error.message]
    try:
        loaded = read_content(content)
    except InvalidRequest:
        return [error.message]
    return [json_words(problem) for problem in content_problems(loaded)] or [error.message]


class IssuesPage:
    """GET: the newest issues with their previews and the digest form."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        try:
            before_id = before_param(req, "an issue")
        except InvalidRequest as problem:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current=LABEL,
                title="No such page of issues",
                message=problem.message,
                back_to=ISSUES,
                back_text="Newest issues",
            )
            return
        self.show(req, resp, admin, before_id=before_id)

    def show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        *,
        status: str = falcon.HTTP_200,
        error: NewsletterError | None = None,
        kind: str = DEFAULT_KIND,
        issue_date: str = "",
        content: str = "",
        before_id: int | None = None,
    ) -> None:
        """The page; with ``error`` the digest form is shown again with the chosen ``kind``,
        ``issue_date`` and ``content`` (each cut to a bounded length) and the reason nothing
        was recorded."""
        issues = self.pages.service.issues
        page = page_back(
            lambda limit: issues.list(limit, before_id=before_id),
            LIST_LIMIT,
            before_id,
            url=self.pages.url,
            path=ISSUES,
        )
        self.pages.show(
            req,
            resp,
            admin,
            "issues.html",
            status=status,
            current=LABEL,
            kinds=ALL_KINDS,
            kind=kind if kind in ALL_KINDS else DEFAULT_KIND,
            issue_date=issue_date[:MAX_DATE_ECHO],
            content=content[:MAX_CONTENT_BYTES],
            max_content_kib=MAX_CONTENT_BYTES // 1024,
            errors=_error_words(error, content) if error else [],
            error_field=_form_field(error),
            issues=[
                (record, issue_anchor(record.id), self.pages.url(preview_path(record.id)))
                for record in page.items
            ],
            delivery=_delivery_words(issues.deliveries(page.items)),
            pushed=self.pages.service.context.settings.delivery_mode == "connector",
            older_url=page.older_url,
            newest_url=page.newest_url,
            content_installed=issues.content_plugin_installed(),
            digest_url=self.pages.url(ISSUES_DIGEST),
            compose_url=self.pages.url(ISSUES_COMPOSE),
        )
        resp.set_header("Content-Security-Policy", PAGE_POLICY)


class IssuePreview:
    """GET: the issue's stored HTML as its own sandboxed document (404 for no such issue)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response, issue_id: int) -> None:
        try:
            record = self.pages.service.issues.get(issue_id)
        except NotFound:
            raise falcon.HTTPNotFound() from None
        resp.content_type = "text/html; charset=utf-8"
        for name, value in PREVIEW_HEADERS.items():
            resp.set_header(name, value)
        resp.text = record.html or ""


def _delivery_words(deliveries: dict[int, SubscriberEventRecord | None]) -> dict[int, str]:
    """Issue id -> what became of its event, in words."""
    return {
        issue_id: event_words(event) if event else "Delivered (its record was since pruned)"
        for issue_id, event in deliveries.items()
    }


def record_digest(call: ActCall) -> Done:
    """Record an issue of the form's kind and date, from its content or else the content
    plugin's, through :meth:`IssueService.run_digest`; the target names the issue (never its
    content), then back to the list at the recorded issue and its preview.

    :raises NewsletterError: a refused run (see the module's docstring).
    """
    form = call.form
    record = call.service.issues.run_digest(
        _kind(form), form.get("date").strip() or None, read_content(form.get("content"))
    )
    target = f"{record.kind} issue {record.id}"
    return Done(
        target,
        flash=f"Recorded {target} for {record.issue_date}: {record.subject}",
        redirect_to=f"{ISSUES}#{issue_anchor(record.id)}",
    )


def digest_refused(call: ActCall, problem: NewsletterError) -> None:
    """The page again (400) with the reason and what was typed; nothing recorded."""
    form = call.form
    IssuesPage(call.pages).show(
        call.req,
        call.resp,
        call.admin,
        status=falcon.HTTP_400,
        error=problem,
        kind=_kind(form),
        issue_date=form.get("date").strip(),
        content=form.get("content"),
    )


def _kind(form: FormData) -> str:
    return form.get("kind").strip() or DEFAULT_KIND
