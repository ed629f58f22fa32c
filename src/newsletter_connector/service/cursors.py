"""Opaque keyset cursors for the paginated lists (never OFFSET): URL-safe base64 of
``{k: list, a: last id, s: status filter}``. Anything that does not decode to a cursor of the
same list and filter is an ``invalid_request`` naming ``cursor``.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import InvalidRequest

T = TypeVar("T")

MAX_CURSOR_LENGTH = 200
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
MAX_ID = 2**63 - 1  # the largest BIGINT


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a keyset walk; ``next_cursor`` is ``None`` at the end."""

    items: list[T]
    next_cursor: str | None


def encode_cursor(kind: str, after_id: int, status: str | None = None) -> str:
    data: dict[str, object] = {"k": kind, "a": after_id}
    if status is not None:
        data["s"] = status
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, kind: str, status: str | None = None) -> int | None:
    """The ``after_id`` a cursor carries (``None`` for none); else :class:`InvalidRequest`."""
    if cursor is None:
        return None
    invalid = InvalidRequest("cursor is not a cursor returned by this list", field="cursor")
    if not cursor or len(cursor) > MAX_CURSOR_LENGTH or not cursor.isascii():
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
    except (binascii.Error, ValueError):
        raise invalid from None
    if not isinstance(data, dict) or data.get("k") != kind:
        raise invalid
    after_id = data.get("a")
    if type(after_id) is not int or not 0 <= after_id <= MAX_ID:
        raise invalid
    if data.get("s") != status:
        raise InvalidRequest(
            "cursor was issued for a different status filter; keep the same status while walking",
            field="cursor",
        )
    return after_id


def check_limit(limit: int) -> int:
    """``limit`` if it is within 1-500, else :class:`InvalidRequest` naming it."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be an integer between 1 and {MAX_LIMIT}", field="limit")
    return limit
