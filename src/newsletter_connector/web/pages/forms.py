"""Reading a submitted HTML form, and the honeypot field.

:func:`read_form` reads an url-encoded (or, for one-click, multipart) body into a :class:`FormData`,
and refuses anything else with an HTTP error, never a 500. A body without a ``Content-Length`` is
refused: see docs/contributing/decisions/foundation.md, "A form body without a length is 411".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

import falcon

from ..bodies import read_capped

#: The largest form body accepted: a 10,000-character contact message, percent-encoded, fits.
MAX_FORM_BYTES = 128 * 1024
#: The most fields a form may carry (the profile form has about thirty).
MAX_FIELDS = 100
#: The name of the honeypot field: hidden from people by the stylesheet, filled in by bots.
HONEYPOT_FIELD = "website"

URLENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


@dataclass(frozen=True)
class FormData:
    """The fields of a submitted form, each with every value it was sent with, in order."""

    fields: dict[str, list[str]] = field(default_factory=dict)

    def get(self, name: str) -> str:
        """The value of ``name`` (the first one if repeated), ``""`` when absent."""
        values = self.fields.get(name)
        return values[0] if values else ""

    def get_list(self, name: str) -> list[str]:
        """Every value of ``name`` (checkbox groups), in the order sent."""
        return list(self.fields.get(name, ()))

    def has(self, name: str) -> bool:
        return name in self.fields

    @property
    def honeypot_filled(self) -> bool:
        """True when the hidden honeypot field came back with text in it (a bot)."""
        return bool(self.get(HONEYPOT_FIELD).strip())


def _collect(pairs: Iterable[tuple[str, str]]) -> FormData:
    fields: dict[str, list[str]] = {}
    for name, value in pairs:
        fields.setdefault(name, []).append(value)
    return FormData(fields)


def _bad_request(description: str) -> falcon.HTTPBadRequest:
    return falcon.HTTPBadRequest(title="Bad request", description=description)


def read_form(
    req: falcon.Request, *, allow_multipart: bool = False, max_bytes: int = MAX_FORM_BYTES
) -> FormData:
    """The submitted form; ``allow_multipart`` also accepts ``multipart/form-data`` text parts.

    :raises falcon.HTTPError: 415 not a form body, 413 over ``max_bytes``, 400 not
        UTF-8, too many fields or malformed multipart, 411 a chunked or lengthless multipart body.
    """
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if req.content_length is None and (
        req.get_header("Transfer-Encoding") or (media_type == MULTIPART and allow_multipart)
    ):
        raise falcon.HTTPLengthRequired(
            title="Length required", description="the form must be sent with a Content-Length"
        )
    if media_type == MULTIPART and allow_multipart:
        return _read_multipart(req, max_bytes)
    if media_type != URLENCODED:
        raise falcon.HTTPUnsupportedMediaType(
            title="Unsupported form", description="the form must be sent as a web form"
        )
    raw = read_capped(req, max_bytes)
    if raw is None:
        raise _too_large()
    try:
        text = raw.decode("utf-8")
        pairs = parse_qsl(
            text,
            keep_blank_values=True,
            max_num_fields=MAX_FIELDS,
            encoding="utf-8",
            errors="strict",
        )
    except UnicodeDecodeError:
        raise _bad_request("the form was not sent as UTF-8 text") from None
    except ValueError:
        raise _bad_request("the form has too many fields") from None
    return _collect(pairs)


def _too_large() -> falcon.HTTPContentTooLarge:
    return falcon.HTTPContentTooLarge(
        title="Form too large", description="the form is larger than this page accepts"
    )


def _read_multipart(req: falcon.Request, max_bytes: int) -> FormData:
    if req.content_length is not None and req.content_length > max_bytes:
        raise _too_large()
    pairs: list[tuple[str, str]] = []
    try:
        form = req.get_media()
        for part in form:
            if len(pairs) >= MAX_FIELDS:
                raise _bad_request("the form has too many fields")
            pairs.append((part.name or "", part.get_text() or ""))
    except falcon.HTTPContentTooLarge:
        raise
    except (falcon.HTTPError, UnicodeDecodeError, ValueError):
        raise _bad_request("the form could not be read") from None
    return _collect(pairs)
