"""Admin lists paged back by id, newest first: ``?before=<id>`` shows the items older than
that one."""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest
from ...service.cursors import MAX_ID
from ..params import decimal_integer


def before_param(req: falcon.Request, item: str) -> int | None:
    """The ``before`` query parameter, or ``None`` when it is absent or blank.

    :raises InvalidRequest: naming ``before``, when it is not a whole number from 1 to the
        largest id; the message calls the id that of ``item`` ("an act").
    """
    before = req.get_param("before")
    if not before:
        return None
    before_id = decimal_integer(before)
    if before_id is None or not 0 < before_id <= MAX_ID:
        message = f"before must be a positive whole number (the id of {item})."
        raise InvalidRequest(message, field="before")
    return before_id
