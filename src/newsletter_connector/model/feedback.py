"""The body of ``POST {base_url}/api/export/feedback``: what the connected platform reports.

A JSON array of up to :data:`MAX_FEEDBACK_ITEMS` items (an empty one applies nothing), each
``{id, type, email, occurred_at, reason?}``. :func:`parse_feedback` validates the whole array
before anything is applied and names the first problem by item index and field.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import partial
from typing import Annotated, Any

from pydantic import Field

from ..errors import InvalidRequest
from ..storage.records import FeedbackKind
from ..timeutil import parse_timestamp
from .contact import enum_value, optional_text
from .requests import Email, RequestBody, field_rule, parse_request

MAX_FEEDBACK_ITEMS = 100
MAX_FEEDBACK_ID_LENGTH = 200
MAX_REASON_LENGTH = 1000
FEEDBACK_TYPES = ("bounce", "complaint", "unsubscribe")
#: Visible ASCII, no spaces: a UUID or any platform's own id.
_ID_PATTERN = r"^[!-~]{1,200}$"
_ID_RE = re.compile(_ID_PATTERN)


def _feedback_id(value: Any, field: str) -> str:
    if not isinstance(value, str) or not _ID_RE.match(value):
        raise InvalidRequest(
            f"{field} must be a string of 1 to {MAX_FEEDBACK_ID_LENGTH} visible ASCII characters"
        )
    return value


def _instant(value: Any, field: str) -> datetime:
    parsed = parse_timestamp(value) if isinstance(value, str) and value.strip() else None
    if parsed is None:
        raise InvalidRequest(f"{field} must be an ISO-8601 timestamp with a time zone")
    return parsed


class FeedbackItem(RequestBody):
    """One report about an address."""

    id: Annotated[
        str,
        Field(min_length=1, max_length=MAX_FEEDBACK_ID_LENGTH, pattern=_ID_PATTERN),
        field_rule(_feedback_id),
    ] = Field(description="the platform's id of this report; a report whose id was seen is ignored")
    type: Annotated[FeedbackKind, field_rule(partial(enum_value, allowed=FEEDBACK_TYPES))] = Field(
        description="bounce: a hard bounce; complaint: marked as spam; unsubscribe: opted out "
        "at the platform"
    )
    email: Email
    occurred_at: Annotated[
        datetime, Field(json_schema_extra={"format": "date-time"}), field_rule(_instant)
    ] = Field(description="when it happened at the platform; ISO-8601 with a time zone offset")
    reason: Annotated[
        Annotated[str, Field(max_length=MAX_REASON_LENGTH)] | None,
        field_rule(partial(optional_text, max_length=MAX_REASON_LENGTH)),
    ] = Field(default=None, description="the platform's words, e.g. an SMTP diagnostic; kept")


def parse_feedback(body: Any) -> list[FeedbackItem]:
    """``body`` as feedback items, in order.

    :raises InvalidRequest: naming ``body`` (not an array, empty, too long) or the item by
        index and its field, e.g. ``item 2: email is not a valid email address``.
    """
    if not isinstance(body, list):
        raise InvalidRequest("body must be a JSON array of feedback items", field="body")
    if len(body) > MAX_FEEDBACK_ITEMS:
        raise InvalidRequest(
            f"body must hold at most {MAX_FEEDBACK_ITEMS} feedback items, not {len(body)}",
            field="body",
        )
    items = []
    for index, raw in enumerate(body):
        if not isinstance(raw, dict):
            raise InvalidRequest(f"item {index} must be a JSON object", field=str(index))
        try:
            items.append(parse_request(FeedbackItem, raw))
        except InvalidRequest as exc:
            field = f"{index}.{exc.field}" if exc.field else str(index)
            raise InvalidRequest(f"item {index}: {exc.message}", field=field) from None
    return items
