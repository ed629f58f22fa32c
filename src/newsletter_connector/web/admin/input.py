"""Admin input refused at the door: a query parameter, path segment or form field holding a
control character is a 400 naming it, before any page or service reads it.

No admin field is meant to hold one, and PostgreSQL cannot store a NUL in text at all. A
single-line field may hold no C0 control character and no DEL; a multi-line one
(:data:`MULTILINE_FIELDS`, the digest's content and the composer's puzzle hint) may hold tab,
line feed and carriage return. Query parameters and path segments are checked by
:class:`AdminInputMiddleware` for every admin route, forms by
:meth:`~.base.AdminPages.read_checked_form` and the login page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import falcon

from .paths import ROOT

#: Form fields that are textareas: tab, line feed and carriage return are allowed in them
#: (the digest's content, the composer's puzzle hint).
MULTILINE_FIELDS = frozenset({"content", "puzzle_hint"})
_SINGLE_LINE_BAD = re.compile(r"[\x00-\x1f\x7f]")
_MULTI_LINE_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: The longest field name repeated in the answer.
_SHOWN_NAME_LENGTH = 40


class AdminInputRefused(Exception):
    """A field holding a control character; ``message`` names it (in the 400 page)."""

    def __init__(self, field: str) -> None:
        shown = field if len(field) <= _SHOWN_NAME_LENGTH else field[:_SHOWN_NAME_LENGTH] + "..."
        if _SINGLE_LINE_BAD.search(field):
            shown = ascii(shown)
        self.field = field
        self.message = f"{shown} must not contain control characters; nothing was changed."
        super().__init__(self.message)


def check_fields(fields: Mapping[str, str | Iterable[str]]) -> None:
    """:raises AdminInputRefused: a field name or value of ``fields`` (each value a string or
    the strings it was sent with) holding a control character its kind of field may not hold.
    """
    for name, values in fields.items():
        bad = _MULTI_LINE_BAD if name in MULTILINE_FIELDS else _SINGLE_LINE_BAD
        if _SINGLE_LINE_BAD.search(name):
            raise AdminInputRefused(name)
        for value in [values] if isinstance(values, str) else values:
            if bad.search(value):
                raise AdminInputRefused(name)


class AdminInputMiddleware:
    """Falcon middleware checking the query parameters and path segments of admin routes."""

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        if resource is None or not (req.path == ROOT or req.path.startswith(ROOT + "/")):
            return
        check_fields(req.params)
        check_fields({name: value for name, value in params.items() if isinstance(value, str)})
