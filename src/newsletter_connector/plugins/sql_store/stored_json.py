"""Reading the store's JSON columns (the engine's ``json_deserializer``): ``json.loads``'s
value, parsed by orjson where the two agree (bench: export_walk).

orjson differs on integer literals beyond 64 bits (it gives a ``float`` of magnitude 2**63 or
more, so such a value is parsed again by the stdlib) and on texts it refuses (``NaN``,
``Infinity``, overflowing numbers, lone surrogates: the stdlib parses them).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from sqlalchemy import Text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

_TWO_63 = float(2**63)


def _exact(value: Any) -> bool:
    """Whether orjson's ``value`` holds no float of magnitude 2**63 or more (none that may be
    an integer literal it could not hold exactly). orjson never returns NaN or infinities."""
    kind = type(value)
    if kind is dict:
        items = value.values()
    elif kind is list:
        items = value
    else:
        return kind is not float or abs(value) < _TWO_63
    for item in items:
        kind = type(item)
        if kind is float:
            if abs(item) >= _TWO_63:
                return False
        elif (kind is dict or kind is list) and not _exact(item):
            return False
    return True


def stored_json_loads(data: str | bytes) -> Any:
    """The value of the JSON text ``data`` (``str`` from SQLite, ``bytes`` from psycopg),
    equal in value and type to ``json.loads(data)``."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
    return value if _exact(value) else json.loads(data)


def lenient_json_loads(data: str | bytes) -> Any:
    """:func:`stored_json_loads`, or ``None`` for a text it cannot parse (not JSON, or nested
    deeper than the parsers' recursion limits): for columns whose readers must never fail."""
    try:
        return stored_json_loads(data)
    except (ValueError, RecursionError):
        return None


class LenientJson(TypeDecorator[Any]):
    """A JSON column read as its text and parsed by :func:`lenient_json_loads`: use it as
    ``cast(column, LenientJson())`` (SQL ``CAST(... AS TEXT)`` on every dialect)."""

    impl = Text
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return None if value is None else lenient_json_loads(value)
