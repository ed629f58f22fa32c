"""Reading the store's JSON columns: ``json.loads``'s value, parsed by orjson where it agrees.

Every JSON column read goes through the engine's ``json_deserializer`` (SQLite: SQLAlchemy's
result processor; PostgreSQL: psycopg's loader). An export page of 1,000 analytics events
parses a few hundred ``props`` objects; orjson parses them about ten times faster than the
stdlib (issue 10).

orjson and ``json.loads`` agree on every JSON text but two kinds:

- an integer beyond 64 bits: the stdlib gives the exact ``int``; orjson quietly gives a
  ``float``. Any text holding a run of 19 or more digits (every integer that can overflow
  has one) is parsed by the stdlib;
- texts orjson refuses and the stdlib accepts (``NaN``, ``Infinity``, a number overflowing
  to infinity, a lone surrogate escape): orjson raises, and the stdlib parses them.

So :func:`stored_json_loads` returns exactly what ``json.loads`` returns, or raises what it
raises (``tests/test_stored_json.py`` checks this over generated texts).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_DIGITS_STR = re.compile(r"\d{19}")
_LONG_DIGITS_BYTES = re.compile(rb"\d{19}")


def stored_json_loads(data: str | bytes) -> Any:
    """The value of the JSON text ``data`` (``str`` from SQLite, ``bytes`` from psycopg),
    equal in value and type to ``json.loads(data)``."""
    pattern = _LONG_DIGITS_STR if isinstance(data, str) else _LONG_DIGITS_BYTES
    if pattern.search(data) is None:  # type: ignore[arg-type]
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)
