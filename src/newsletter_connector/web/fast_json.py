"""The app's JSON form written by orjson, for the walk endpoints' large pages (issue 10).

The app's JSON form is ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` as
UTF-8 (:data:`STDLIB_DUMPS`, falcon's media handler in ``app.py``). orjson writes the same
bytes, 15-20 times faster, for ``str``, ``int`` (64 bits), ``bool``, ``None``, lists, tuples,
``str``-keyed dicts (in insertion order) and every float except two kinds (see
:func:`float_written_alike`); ``tests/test_fast_json.py`` checks these claims.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime
from functools import partial
from typing import Any

import falcon
import orjson

from ..timeutil import isoformat_z

#: The app's JSON form (before UTF-8 encoding): what falcon's media handler writes.
STDLIB_DUMPS = partial(json.dumps, ensure_ascii=False, separators=(",", ":"))

# Types orjson would write where the stdlib writes them differently or refuses them are handed
# back to the stdlib (raising TypeError): dataclasses, datetimes, subclasses of str/int/dict/list.
_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# With stamps: naive datetimes written by orjson as isoformat_z writes them (UTC, "Z").
_STAMP_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_NAIVE_UTC
    | orjson.OPT_UTC_Z
)


def _written_stamp(value: Any) -> str:
    """The stdlib's ``default`` for bodies with stamps: a plain naive ``datetime`` as
    :func:`isoformat_z` writes it; anything else refused as the stdlib refuses it."""
    if type(value) is datetime and value.tzinfo is None:
        return isoformat_z(value) or ""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def float_written_alike(value: float) -> bool:
    """Whether orjson writes ``value`` as the stdlib does: yes unless it is tiny,
    ``0 < |value| < 1e-4`` (stdlib ``1e-05``, orjson ``0.00001``), or not finite (stdlib
    ``NaN``/``Infinity``, orjson ``null``)."""
    return value == 0.0 or (abs(value) >= 1e-4 and math.isfinite(value))


def scalars_written_alike(values: Iterable[Any]) -> bool:
    """Whether no float among ``values`` (not searched recursively) is one that
    :func:`float_written_alike` refuses."""
    return all(type(v) is not float or float_written_alike(v) for v in values)


def dumps(value: Any, *, floats_alike: bool = True, stamps: bool = False) -> bytes:
    """``value`` in the app's JSON form, as UTF-8 bytes.

    :param floats_alike: the caller's promise that every float in ``value`` passes
        :func:`float_written_alike`; ``False`` writes with the stdlib (slower, always exact).
    :param stamps: ``value`` may hold timestamps made by ``timeutil.utc_stamp`` (plain naive
        UTC datetimes), each written as the string ``isoformat_z`` makes of it (orjson writes
        these far more cheaply than ``isoformat`` builds them). With it, orjson also writes
        ``date`` and ``time`` values, which the stdlib refuses, and an aware datetime with its
        offset: the callers' bodies never hold them (``utc_stamp`` makes naive ones).

    Values orjson refuses (ints beyond 64 bits, non-``str`` keys, the passthrough types above,
    lone surrogates) are written, or refused, by the stdlib exactly as the media handler would.
    The one remaining difference is on values the stdlib refuses: orjson writes ``UUID`` and
    ``Enum`` members instead of raising; the callers' bodies never hold them.
    """
    if floats_alike:
        try:
            return orjson.dumps(value, option=_STAMP_OPTIONS if stamps else _OPTIONS)
        except TypeError:
            pass
    return STDLIB_DUMPS(value, default=_written_stamp if stamps else None).encode()


def set_json(
    resp: falcon.Response, value: Any, *, floats_alike: bool = True, stamps: bool = False
) -> None:
    """Answer with ``value`` in the app's JSON form (what ``resp.media = value`` would send,
    given ``isoformat_z``'s strings where ``value`` holds stamps: see :func:`dumps`)."""
    resp.data = dumps(value, floats_alike=floats_alike, stamps=stamps)
    resp.content_type = falcon.MEDIA_JSON
