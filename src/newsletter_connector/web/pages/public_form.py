"""A form anyone may send (signup, contact): the one POST flow both follow.

POST is refused (429) over the client's rate limit, then refuses a cross-site or expired form,
answers a filled honeypot as if it had worked (storing nothing), then makes the page's ONE
service call: on success it redirects to the page's "done" address, on a validation error it
shows the form again with the error beside its field and everything typed kept.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

import falcon

from ...errors import InvalidRequest
from ..rate_limit import LimitedForm
from .base import ReaderPages, see_other
from .forms import FormData
from .messages import friendly_error

log = logging.getLogger(__name__)


class PublicFormPage:
    """Subclasses name their template and paths and define :meth:`values` and :meth:`submit`."""

    #: What the log and the rate limits call this form.
    name: ClassVar[LimitedForm]
    template: ClassVar[str]
    path: ClassVar[str]
    done_path: ClassVar[str]
    #: Service field (as named by ``InvalidRequest.field``) → form field.
    field_map: ClassVar[Mapping[str, str]]
    #: The form field an error naming no known field is shown beside.
    fallback_field: ClassVar[str]

    def __init__(self, pages: ReaderPages) -> None:
        self.pages = pages

    def values(self, form: FormData | None) -> dict[str, str]:
        """The form's fields as typed (blank ones for a new form)."""
        raise NotImplementedError

    def submit(self, values: dict[str, str]) -> None:
        """The one service call. :raises InvalidRequest: naming the bad field."""
        raise NotImplementedError

    def context(self) -> dict[str, Any]:
        """Anything else the template needs."""
        return {}

    def show(
        self, req: falcon.Request, resp: falcon.Response, values: dict[str, str], **context: Any
    ) -> None:
        """The form with ``values`` (and ``status``, ``errors`` or ``notice`` when given)."""
        self.pages.show_form(req, resp, self.template, values=values, **self.context(), **context)

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp, self.values(None))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        if self.pages.refused_for_volume(req, resp, self.name):
            return
        form = self.pages.read_form(req, resp)
        if form is None:
            return
        values = self.values(form)
        show_again = partial(self.show, req, resp, values)
        if not self.pages.form_accepted(req, resp, form, self.pages.url(self.path), show_again):
            return
        if form.honeypot_filled:
            log.info("%s form: honeypot filled in; nothing stored", self.name)
            see_other(resp, self.pages.url(self.done_path))
            return
        try:
            self.submit(values)
        except InvalidRequest as error:
            errors = friendly_error(error, self.field_map, self.fallback_field)
            show_again(status=falcon.HTTP_400, errors=errors)
            return
        see_other(resp, self.pages.url(self.done_path))


class DonePage:
    """The page a public form redirects to once sent."""

    def __init__(self, pages: ReaderPages, template: str) -> None:
        self.pages = pages
        self.template = template

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.pages.render(resp, self.template)
