"""What every reader page shares: the service, the renderer, the CSRF guard and the common
answers. Pages parse the form, call ONE service method and render the outcome; every rule
(validation, transitions, events) lives in the service.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from ...i18n import N_
from ...service import NewsletterService
from ...storage.records import SubscriberRecord, TokenKind
from ..rate_limit import LimitedForm, PublicRateLimits
from .csrf import FIELD_NAME, CsrfGuard
from .forms import FormData, read_form
from .rendering import PageRenderer

#: Shown above a form sent back without a valid token (expired page, cookies cleared).
EXPIRED_NOTICE = N_(
    "For your safety this form has to be sent again. "
    "Please check it and press the button once more."
)


class ReaderPages:
    """The shared dependencies of the reader pages of one app."""

    def __init__(self, service: NewsletterService) -> None:
        self.service = service
        self.settings = service.settings
        self.renderer = PageRenderer(service.settings)
        self.csrf = CsrfGuard(service.context)
        self.rate_limits = PublicRateLimits(service.context)

    def url(self, path: str) -> str:
        """The public address of ``path`` under ``base_url``."""
        return self.settings.public_base_url + path

    def render(
        self, resp: falcon.Response, template: str, *, status: str = falcon.HTTP_200, **context: Any
    ) -> None:
        """A page without a form."""
        context.setdefault("errors", {})
        context.setdefault("notice", None)
        self.renderer.render(resp, template, status=status, **context)

    def show_form(
        self, req: falcon.Request, resp: falcon.Response, template: str, **context: Any
    ) -> None:
        """A page with a form (``status`` as for :meth:`render`): a fresh CSRF token (and its
        cookie) comes with it."""
        self.render(resp, template, csrf_token=self.csrf.issue(req, resp), **context)

    def error_page(self, req: falcon.Request, resp: falcon.Response, status: str) -> None:
        """A calm page for what went wrong before a page could answer (unknown address,
        wrong method, database unavailable, an unexpected fault), with the ``status``."""
        code = int(status.split()[0])
        self.render(resp, "error.html", status=status, code=code)

    def refused_for_volume(
        self, req: falcon.Request, resp: falcon.Response, form: LimitedForm
    ) -> bool:
        """Count this POST against ``form``'s per-client limit; over it, answer 429 with
        ``Retry-After`` and a page saying so (before anything is read or changed) and return
        true."""
        retry_after = self.rate_limits.retry_after(req, form)
        if retry_after is None:
            return False
        self.render(resp, "too_many.html", status=falcon.HTTP_429, retry_after=retry_after)
        resp.set_header("Retry-After", str(retry_after))
        return True

    def not_found(self, resp: falcon.Response) -> None:
        """The friendly page for a link whose token matches nobody."""
        self.render(resp, "not_found.html", status=falcon.HTTP_404)

    def find_by_token(
        self, resp: falcon.Response, kind: TokenKind, token: str
    ) -> SubscriberRecord | None:
        """The subscriber whose ``kind`` link token is ``token``; ``None`` after answering
        with the not-found page."""
        record = self.service.subscribers.find_by_token(kind, token)
        if record is None:
            self.not_found(resp)
        return record

    def answer_head(self, resp: falcon.Response, kind: TokenKind, token: str) -> None:
        """``HEAD`` of a token page: 200 or 404, no body, nothing changed."""
        found = self.service.subscribers.find_by_token(kind, token) is not None
        resp.status = falcon.HTTP_200 if found else falcon.HTTP_404
        resp.content_type = "text/html; charset=utf-8"
        resp.set_header("Cache-Control", "no-store")

    def read_form(
        self, req: falcon.Request, resp: falcon.Response, *, allow_multipart: bool = False
    ) -> FormData | None:
        """The submitted form, or ``None`` after answering an unreadable one (wrong media type,
        too large, not UTF-8) with a plain-words page and its 4xx status."""
        try:
            return read_form(req, allow_multipart=allow_multipart)
        except falcon.HTTPError as error:
            status = falcon.code_to_http_status(error.status_code)
            reason = {
                411: N_("It was sent without saying how long it was."),
                413: N_("It was longer than this form accepts."),
                415: N_("It did not come from one of our forms."),
            }.get(error.status_code, N_("It was not in a form we understand."))
            self.render(resp, "bad_form.html", status=status, reason=reason)
            return None

    def form_accepted(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        form: FormData,
        retry_url: str,
        show_again: Callable[..., None],
    ) -> bool:
        """Whether the submission's CSRF token is good. Otherwise it is answered here: a
        cross-site one with 403, a missing, forged or expired one by
        ``show_again(status=400, notice=EXPIRED_NOTICE)``."""
        verdict = self.csrf.check(req, form.get(FIELD_NAME))
        if verdict == "cross_site":
            self.render(resp, "forbidden.html", status=falcon.HTTP_403, retry_url=retry_url)
            return False
        if verdict == "invalid":
            show_again(status=falcon.HTTP_400, notice=EXPIRED_NOTICE)
            return False
        return True


def see_other(resp: falcon.Response, location: str) -> None:
    """Post/redirect/get: a refresh after a successful form does not send it twice."""
    resp.status = falcon.HTTP_303
    resp.location = location
    resp.set_header("Cache-Control", "no-store")
