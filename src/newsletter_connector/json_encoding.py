"""The service's one JSON encoder: every response body, pushed body and stored JSON value, so
an API response and an event pushed about the same contact carry the same bytes.

The form is orjson's (UTF-8, compact, keys in insertion order, non-ASCII as itself, a non-finite
float as ``null``). A naive ``datetime`` is UTC, written ISO-8601 with ``Z`` and microseconds
only when non-zero; an integer beyond 64 bits is written exactly, as its digits.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from .timeutil import isoformat_z

_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z
_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def raw_json(text: str | bytes) -> Any:
    """``text``, already JSON, to be written into a value as it is (not re-encoded)."""
    return orjson.Fragment(text)


def _default(value: Any) -> Any:
    # orjson writes plain datetimes itself; a subclass (a host store's) comes here.
    if isinstance(value, datetime):
        return isoformat_z(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _exact_ints(value: Any) -> Any:
    """``value`` with every integer orjson cannot hold made a fragment of its digits."""
    if type(value) is int:
        return value if _INT64_MIN <= value <= _UINT64_MAX else orjson.Fragment(str(value))
    if isinstance(value, dict):
        return {key: _exact_ints(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_exact_ints(item) for item in value]
    return value


def dumps(value: Any) -> bytes:
    """``value`` as JSON, UTF-8 (the module's form).

    :raises TypeError: a value JSON has no form for (or a ``str`` holding a lone surrogate).
    """
    try:
        return orjson.dumps(value, default=_default, option=_OPTIONS)
    except orjson.JSONEncodeError:
        # Only an integer beyond 64 bits is retried; anything else fails again below.
        return orjson.dumps(_exact_ints(value), default=_default, option=_OPTIONS)


def dumps_text(value: Any) -> str:
    """:func:`dumps` as ``str`` (for the SQL store's JSON columns)."""
    return dumps(value).decode()


def json_values(value: Any) -> Any:
    """``value`` as the plain JSON values its encoding reads back as (timestamps become their
    ``Z`` strings), for data handed on as JSON: an event's payload."""
    return orjson.loads(dumps(value))


#: JSON text to Python values (request bodies are parsed strictly by ``web/bodies.py``).
loads = orjson.loads
