"""Reading JSON request bodies strictly: a malformed body is ``invalid_request`` naming ``body``.

The body is parsed as JSON whatever the declared content type (``curl -d`` sends a form type)
and capped in size, so no upload ties up a worker. Every JSON body goes through
:func:`decode_json`, so deep nesting is a 400, never an escaping ``RecursionError``.
"""

from __future__ import annotations

import json
from typing import Any

import falcon

from ..errors import InvalidRequest

MAX_BODY_BYTES = 64 * 1024


def json_object(req: falcon.Request) -> dict[str, Any]:
    """The request body as a JSON object.

    :raises InvalidRequest: naming ``body``: sent without a ``Content-Length`` (chunked), empty,
        too large, not UTF-8 JSON, or not an object.
    """
    value = json_body(req, "a JSON object")
    if not isinstance(value, dict):
        raise InvalidRequest("body must be a JSON object", field="body")
    return value


def json_body(req: falcon.Request, expected: str, limit: int = MAX_BODY_BYTES) -> Any:
    """The request body as any JSON value (``expected`` names what it should be, for the
    message when it is empty).

    :raises InvalidRequest: naming ``body``: sent without a ``Content-Length`` (chunked), empty,
        over ``limit`` bytes, or not UTF-8 JSON.
    """
    length = req.content_length
    if length is None and req.get_header("Transfer-Encoding"):
        # A chunked body arrives without a length and falcon would read it as empty.
        raise InvalidRequest("body must be sent with a Content-Length, not chunked", field="body")
    raw = read_capped(req, limit)
    if raw is None:
        raise InvalidRequest(f"body must be at most {limit} bytes", field="body")
    if not raw.strip():
        raise InvalidRequest(f"body is required: {expected}", field="body")
    try:
        return decode_json(raw)
    except ValueError:
        raise InvalidRequest("body is not valid JSON", field="body") from None


def read_capped(req: falcon.Request, limit: int) -> bytes | None:
    """The body, or ``None`` when its declared or actual length is over ``limit`` bytes (then
    at most ``limit + 1`` bytes are read)."""
    if req.content_length is not None and req.content_length > limit:
        return None
    raw = req.bounded_stream.read(limit + 1)
    return None if len(raw) > limit else bytes(raw)


def decode_json(raw: bytes) -> Any:
    """``raw`` as UTF-8 JSON. :raises ValueError: not UTF-8, not JSON (``NaN`` and ``Infinity``
    included), or nested deeper than the parser's recursion allows."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
