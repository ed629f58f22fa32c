"""``/admin/issues``: the recorded issues, newest first, each previewed in a sandboxed frame,
and "Record a test digest" (what ``newsletter-connector digest --kind test`` does).

The preview answers the stored HTML under a ``sandbox`` Content-Security-Policy (no scripts,
its own opaque origin, nothing loaded but https/data images and inline styles), framed by the
issues page only.
"""

from __future__ import annotations

import falcon

from ...errors import NewsletterError, NotFound
from ..pages.rendering import SECURITY_HEADERS
from .base import AdminPages
from .paths import ISSUES, ISSUES_TEST_DIGEST

#: Issues listed (each with its preview), newest first.
LIST_LIMIT = 20
#: What the page is called in the navigation.
LABEL = "Issues"
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
    """GET: the newest issues with their previews and the test-digest form."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        issues = self.pages.service.issues
        self.pages.show(
            req,
            resp,
            admin,
            "issues.html",
            current=LABEL,
            issues=[
                (record, self.pages.url(preview_path(record.id)))
                for record in issues.list(LIST_LIMIT)
            ],
            content_installed=issues.content_plugin_installed(),
            digest_url=self.pages.url(ISSUES_TEST_DIGEST),
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


class RecordTestDigest:
    """POST: record a test issue through :meth:`IssueService.run_digest` (audited), then back
    to the list with a flash saying what was recorded or why nothing was."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        if self.pages.read_checked_form(req, resp, admin) is None:
            return
        try:
            record = self.pages.service.issues.run_digest("test")
        except NewsletterError as problem:
            self.pages.flash.set(resp, f"No test digest was recorded: {problem.message}")
        else:
            self.pages.audit(req, admin, "issue.test_digest", f"issue {record.id}")
            self.pages.flash.set(resp, f"Recorded test issue {record.id}: {record.subject}")
        self.pages.redirect(resp, ISSUES)
