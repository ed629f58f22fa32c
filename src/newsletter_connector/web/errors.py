"""Maps errors to each surface's wire shape: ``{"error", "message"}`` for the Newsletter API,
analytics and export, ``{"message"}`` for list-source, an HTML page for the reader pages. Every
export 404 is the app's 404 for a missing path (docs/contributing/decisions/foundation.md, "The
export 404 is the site's 404 page"). No response ever includes a traceback, a secret or a token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import falcon

from ..errors import (
    ConsentRequired,
    DbUnavailable,
    InvalidRequest,
    NewsletterError,
    NotFound,
    NotMigrated,
    Unauthorized,
)
from ..log_redaction import redact_path
from .paths import surface_of

log = logging.getLogger("newsletter_connector.web")

RETRY_AFTER_SECONDS = 5

_STATUS_BY_ERROR: dict[type[NewsletterError], str] = {
    InvalidRequest: falcon.HTTP_400,
    ConsentRequired: falcon.HTTP_400,
    Unauthorized: falcon.HTTP_401,
    NotFound: falcon.HTTP_404,
    DbUnavailable: falcon.HTTP_503,
    NotMigrated: falcon.HTTP_503,
}


def _status_for(error: NewsletterError) -> str:
    for kind in type(error).__mro__:
        if kind in _STATUS_BY_ERROR:
            return _STATUS_BY_ERROR[kind]
    return falcon.HTTP_500


def _code_for(error: NewsletterError) -> str:
    # An un-migrated database is, to an API client, an unavailable one.
    return DbUnavailable.code if isinstance(error, NotMigrated) else error.code


#: Renders an error page for a browser: ``html_page(req, resp, status, message)``, where
#: ``message`` says what was wrong in the words of the error (a page may show it or not).
HtmlPage = Callable[[falcon.Request, falcon.Response, str, str], None]


def render_error(
    req: falcon.Request,
    resp: falcon.Response,
    status: str,
    code: str,
    message: str,
    *,
    html_page: HtmlPage,
) -> None:
    """Write an error response in the shape of the request's surface; ``html_page`` renders
    the reader pages' one."""
    resp.status = status
    surface = surface_of(req.path)
    if surface == "export" and status == falcon.HTTP_404:
        surface = "pages"  # the very page a path outside every surface gets
    if status == falcon.HTTP_503:
        resp.set_header("Retry-After", str(RETRY_AFTER_SECONDS))
    if surface in ("newsletter", "analytics", "export"):
        resp.media = {"error": code, "message": message}
    elif surface == "listsource":
        resp.media = {"message": message}
    else:
        html_page(req, resp, status, message)


def handle_domain_error(
    req: falcon.Request,
    resp: falcon.Response,
    ex: NewsletterError,
    params: dict[str, Any],
    *,
    html_page: HtmlPage,
) -> None:
    status = _status_for(ex)
    if status == falcon.HTTP_401 and surface_of(req.path) == "newsletter":
        resp.set_header("WWW-Authenticate", 'Bearer realm="newsletter"')
    if status == falcon.HTTP_503:
        req.context.unavailable_cause = ex.code  # for the metrics (web/metrics.py)
        log.warning(
            "database unavailable while serving %s %s: %s",
            req.method,
            redact_path(req.path),
            ex.message,
        )
    render_error(req, resp, status, _code_for(ex), ex.message, html_page=html_page)


_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    400: "invalid_request",
    413: "invalid_request",
    415: "invalid_request",
}


def handle_http_error(
    req: falcon.Request,
    resp: falcon.Response,
    ex: falcon.HTTPError,
    params: dict[str, Any],
    *,
    html_page: HtmlPage,
) -> None:
    """Falcon's own errors (unrouted path, wrong method, bad media) in the surface's shape."""
    status_code = ex.status_code
    message = ex.description or ex.title or "error"
    if status_code == 404:
        message = f"no such endpoint: {req.method} {req.path}"
    elif status_code == 405:
        message = f"{req.method} is not allowed on {req.path}"
    headers = ex.headers or {}
    for name, value in headers.items() if isinstance(headers, Mapping) else headers:
        resp.set_header(name, value)
    render_error(
        req,
        resp,
        falcon.code_to_http_status(status_code),
        _HTTP_CODES.get(status_code, "error"),
        message,
        html_page=html_page,
    )


def handle_unexpected(
    req: falcon.Request,
    resp: falcon.Response,
    ex: Exception,
    params: dict[str, Any],
    *,
    html_page: HtmlPage,
) -> None:
    """Any other exception: logged with its traceback, answered with a bare 500."""
    if isinstance(ex, falcon.HTTPError):
        handle_http_error(req, resp, ex, params, html_page=html_page)
        return
    log.exception("unhandled error serving %s %s", req.method, redact_path(req.path))
    render_error(
        req, resp, falcon.HTTP_500, "internal_error", "internal error", html_page=html_page
    )


def install(app: falcon.App[falcon.Request, falcon.Response], *, html_page: HtmlPage) -> None:
    """Register the handlers (falcon picks the most specific exception class); ``html_page``
    renders the error pages a browser gets."""
    app.add_error_handler(Exception, partial(handle_unexpected, html_page=html_page))
    app.add_error_handler(falcon.HTTPError, partial(handle_http_error, html_page=html_page))
    app.add_error_handler(NewsletterError, partial(handle_domain_error, html_page=html_page))
