"""Newsletter API v1: ``GET /issues/latest`` (404 ``not_found`` before the first digest run) and
``GET /issues`` (``html`` and ``text`` only with ``include=html``, and only then read)
(docs/issues.md, "Reading issues").
"""

from __future__ import annotations

import falcon

from ..model.issue import issue_object
from ..service import NewsletterService
from ..service.issues import DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT
from .auth import require_api_key
from .params import enum_param, int_param

INCLUDE_VALUES = ("html",)


@falcon.before(require_api_key)
class LatestIssueResource:
    def __init__(self, service: NewsletterService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = issue_object(self.service.issues.latest(), include_html=True)


@falcon.before(require_api_key)
class IssuesResource:
    def __init__(self, service: NewsletterService) -> None:
        self.service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        limit = int_param(
            req, "limit", default=DEFAULT_LIST_LIMIT, minimum=1, maximum=MAX_LIST_LIMIT
        )
        include_html = enum_param(req, "include", INCLUDE_VALUES) == "html"
        records = self.service.issues.list(limit, include_html=include_html)
        resp.media = {
            "data": [issue_object(record, include_html=include_html) for record in records]
        }


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService, prefix: str
) -> None:
    app.add_route(f"{prefix}/issues/latest", LatestIssueResource(service))
    app.add_route(f"{prefix}/issues", IssuesResource(service))
