"""The shape of every admin act, and the one falcon resource serving them.

An act is a row, :class:`AdminAct`: the address its form posts to, what it calls on the service,
the audit entry, the flash message and where it redirects (post/redirect/get), and, when its
address also answers GET, the page holding its form (a confirm step, or the form's own page).
:class:`ActResource` serves one row: it checks the form's CSRF token (403 otherwise), runs the
row's ``perform``, audits it, flashes and redirects. The rows are :data:`.acts.ACTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import falcon

from ...errors import InvalidRequest, NewsletterError
from ...service import NewsletterService
from ...service.cursors import MAX_ID
from ..pages.forms import MAX_FORM_BYTES, FormData
from ..params import decimal_integer
from .base import AdminPages
from .gate import Admin, signed_in
from .upload import Upload


@dataclass(frozen=True)
class ActCall:
    """One request to an act: what ``perform``, ``page``, ``check`` and ``shown_again`` get.
    ``params`` are the route's fields (``key_id``); ``form`` is empty on GET."""

    pages: AdminPages
    req: falcon.Request
    resp: falcon.Response
    admin: Admin
    params: dict[str, Any]
    form: FormData = field(default_factory=FormData)
    #: The file of a row with ``upload_field`` (``None``: none was chosen).
    upload: Upload | None = None

    @property
    def service(self) -> NewsletterService:
        return self.pages.service


@dataclass(frozen=True)
class Done:
    """What an act did, when its row's ``done`` and ``redirect_to`` cannot say it alone:
    ``target`` is audited, ``flash`` (shown as it is, not a template) and ``redirect_to`` replace
    the row's, and ``answer`` writes the response instead of a redirect (a file, a page showing
    a new key once), after the act is audited: nothing is answered for an unrecorded act."""

    target: str | None
    flash: str | None = None
    redirect_to: str | None = None
    answer: Callable[[], None] | None = None
    detail: str | None = None


def posted_id(call: ActCall, name: str) -> int:
    """The form's ``name``, a stored row's id; a 404 for anything but an id's digits."""
    ident = decimal_integer(call.form.get(name))
    if ident is None or not 0 < ident <= MAX_ID:
        raise falcon.HTTPNotFound()
    return ident


class Unavailable(Exception):
    """Raised by a row's ``check``: the act cannot be done here at all; answered with a
    message page (``status``), nothing changed."""

    def __init__(self, status: str, *, current: str, title: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.current = current
        self.title = title
        self.message = message


@dataclass(frozen=True)
class AdminAct:
    """One admin act, declared.

    - ``path``: the route template its form posts to (app-relative).
    - ``action``: its audit entry; the target is what ``perform`` returns (a label, a name,
      never a secret).
    - ``perform``: calls the service (the method its CLI twin calls) and returns the target,
      or a :class:`Done`. Raising ``refused`` (:class:`InvalidRequest` unless named) calls
      ``shown_again``: the form's page again, 400, nothing audited; without ``shown_again``
      the error propagates.
    - ``done``: the flash message, ``{target}`` filled in; ``None``: none.
    - ``redirect_to``: the app path of the 303; ``None``: ``perform``'s :class:`Done` answers.
    - ``page``: GET at ``path`` (the confirm step, or the page holding the form); without it
      GET is falcon's 405. It may raise :class:`Unavailable` too.
    - ``check``: runs first on POST, before the form is read; raises to refuse
      (:class:`Unavailable`, or an HTTP error such as a 404 for a missing key).
    - ``audited_by_service``: ``perform``'s service method records the act itself (as the
      sign-out is, like the sign-in).
    - ``max_form_bytes``: the form body's cap (413 above it).
    - ``audited``: false for a form that changes nothing (the composer's preview and row
      buttons): ``perform`` answers, and no audit entry is written.
    - ``upload_field``: the form uploads a file in this field (``multipart/form-data``, the
      other fields first; up to ``import_max_bytes``): ``perform`` reads ``call.upload``.
    """

    path: str
    action: str
    perform: Callable[[ActCall], str | Done]
    done: str | None = None
    redirect_to: str | None = None
    shown_again: Callable[[ActCall, Any], None] | None = None
    refused: type[NewsletterError] = InvalidRequest
    page: Callable[[ActCall], None] | None = None
    check: Callable[[ActCall], object] | None = None
    audited_by_service: bool = False
    max_form_bytes: int = MAX_FORM_BYTES
    audited: bool = True
    upload_field: str | None = None


class ActResource:
    """The falcon resource of one :class:`AdminAct` row: POST does the act; GET shows the
    row's ``page`` (only rows with one answer GET, so the others keep falcon's 405)."""

    def __init__(self, pages: AdminPages, act: AdminAct) -> None:
        self.pages = pages
        self.act = act
        if act.page is not None:
            self.on_get = self._show_page

    def _call(self, req: falcon.Request, resp: falcon.Response, params: dict[str, Any]) -> ActCall:
        return ActCall(self.pages, req, resp, signed_in(req), params)

    def _refused(self, call: ActCall, refusal: Unavailable) -> None:
        self.pages.show(
            call.req,
            call.resp,
            call.admin,
            "message.html",
            status=refusal.status,
            current=refusal.current,
            title=refusal.title,
            message=refusal.message,
        )

    def _show_page(self, req: falcon.Request, resp: falcon.Response, **params: Any) -> None:
        call = self._call(req, resp, params)
        assert self.act.page is not None  # only then is this GET's responder
        try:
            self.act.page(call)
        except Unavailable as refusal:
            self._refused(call, refusal)

    def on_post(self, req: falcon.Request, resp: falcon.Response, **params: Any) -> None:
        call = self._call(req, resp, params)
        try:
            self._do(call)
        except Unavailable as refusal:
            self._refused(call, refusal)

    def _do(self, call: ActCall) -> None:
        act, req, resp = self.act, call.req, call.resp
        if act.check is not None:
            act.check(call)
        upload = None
        if act.upload_field is None:
            form = self.pages.read_checked_form(req, resp, call.admin, max_bytes=act.max_form_bytes)
        else:
            form, upload = self.pages.read_checked_upload(req, resp, call.admin, act.upload_field)
        if form is None:
            return
        call = ActCall(self.pages, req, resp, call.admin, call.params, form, upload)
        try:
            outcome = act.perform(call)
        except act.refused as error:
            if act.shown_again is None:
                raise
            act.shown_again(call, error)
            return
        done = outcome if isinstance(outcome, Done) else Done(outcome)
        if act.audited and not act.audited_by_service:
            self.pages.audit(req, call.admin, act.action, done.target, done.detail)
        if done.flash is not None:
            self.pages.flash.set(resp, done.flash)
        elif act.done is not None:
            self.pages.flash.set(resp, act.done.format(target=done.target))
        redirect_to = done.redirect_to or act.redirect_to
        if redirect_to is not None:
            self.pages.redirect(resp, redirect_to)
        elif done.answer is not None:
            done.answer()
