"""``/admin/issues``: the recorded issues, newest first, each previewed in a sandboxed frame,
and "Record a digest": a kind (test by default) and an optional date (today, UTC, by default),
recorded through :meth:`IssueService.run_digest` as ``newsletter-connector digest --kind KIND
--date DATE`` does. A refused run (a daily or weekly issue already recorded for that period, no
content plugin, a bad date or kind) shows the form again with the reason; nothing is recorded.

The preview answers the stored HTML under a ``sandbox`` Content-Security-Policy (no scripts,
its own opaque origin, nothing loaded but https/data images and inline styles), framed by the
issues page only.
"""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest, NewsletterError, NotFound
from ...service.digest_schedule import ALL_KINDS
from ..pages.rendering import SECURITY_HEADERS
from .base import AdminPages
from .gate import Admin
from .paths import ISSUES, ISSUES_DIGEST

#: Issues listed (each with its preview), newest first.
LIST_LIMIT = 20
#: What the page is called in the navigation.
LABEL = "Issues"
#: The kind the digest form starts with: the one the platform never sends to readers.
DEFAULT_KIND = "test"
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


class IssuesPage:
    """GET: the newest issues with their previews and the digest form."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp, self.pages.gate.admin(req))

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
    ) -> None:
        """The page; with ``error`` the digest form is shown again with the chosen ``kind``
        and ``issue_date`` and the reason nothing was recorded."""
        issues = self.pages.service.issues
        self.pages.show(
            req,
            resp,
            admin,
            "issues.html",
            status=status,
            current=LABEL,
            kinds=ALL_KINDS,
            kind=kind if kind in ALL_KINDS else DEFAULT_KIND,
            issue_date=issue_date[:20],
            error=error.message if error else None,
            error_field=error.field if isinstance(error, InvalidRequest) else None,
            issues=[
                (record, self.pages.url(preview_path(record.id)))
                for record in issues.list(LIST_LIMIT)
            ],
            content_installed=issues.content_plugin_installed(),
            digest_url=self.pages.url(ISSUES_DIGEST),
        )
        resp.set_header("Content-Security-Policy", PAGE_POLICY)


class IssuePreview:
    """GET: the issue's stored HTML as its own sandboxed document (404 for no such issue)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response, issue_id: int) -> None:
        self.pages.gate.admin(req)
        try:
            record = self.pages.service.issues.get(issue_id)
        except NotFound:
            raise falcon.HTTPNotFound() from None
        resp.content_type = "text/html; charset=utf-8"
        for name, value in PREVIEW_HEADERS.items():
            resp.set_header(name, value)
        resp.text = record.html or ""


class RecordDigest:
    """POST: record an issue of the chosen kind and date through
    :meth:`IssueService.run_digest` (audited ``issue.digest``, the target naming the issue),
    then back to the list with a flash saying what was recorded; a refused run shows the form
    again (400) with the reason, nothing recorded or audited."""

    def __init__(self, page: IssuesPage) -> None:
        self.page = page
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        form = self.pages.read_checked_form(req, resp, admin)
        if form is None:
            return
        kind = form.get("kind").strip() or DEFAULT_KIND
        issue_date = form.get("date").strip()
        try:
            record = self.pages.service.issues.run_digest(kind, issue_date or None)
        except NewsletterError as problem:
            self.page.show(
                req,
                resp,
                admin,
                status=falcon.HTTP_400,
                error=problem,
                kind=kind,
                issue_date=issue_date,
            )
            return
        target = f"{record.kind} issue {record.id}"
        self.pages.audit(req, admin, "issue.digest", target)
        self.pages.flash.set(resp, f"Recorded {target} for {record.issue_date}: {record.subject}")
        self.pages.redirect(resp, ISSUES)
