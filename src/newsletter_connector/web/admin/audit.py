"""``/admin/audit``: the latest admin acts, newest first (actor, action, target, time), paged
by id (``?before=<id>``: the acts older than that one) through
:meth:`~newsletter_connector.service.admin_audit.AdminAuditService.latest`. Targets are labels
and names: the record never holds a secret.
"""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest
from .base import AdminPages
from .gate import signed_in
from .paging import before_param, page_back
from .paths import AUDIT

#: Acts per page.
PAGE_SIZE = 50


class AuditPage:
    """GET shows one page of the audit record."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        try:
            before_id = before_param(req, "an act")
        except InvalidRequest as problem:
            self.pages.bad_request(
                req,
                resp,
                admin,
                current="Audit log",
                title="No such page of the audit log",
                message=problem.message,
                back_to=AUDIT,
                back_text="Newest acts",
            )
            return
        page = page_back(
            lambda limit: self.pages.service.admin_audit.latest(limit, before_id=before_id),
            PAGE_SIZE,
            before_id,
            url=self.pages.url,
            path=AUDIT,
        )
        self.pages.show(
            req,
            resp,
            admin,
            "audit.html",
            current="Audit log",
            acts=page.items,
            older_url=page.older_url,
            newest_url=page.newest_url,
        )
