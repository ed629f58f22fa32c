"""Making stored analytics values encodable: whatever a stored row holds, the export serves it,
the same way every time (docs/contributing/decisions/analytics-and-export.md, "Stored analytics rows
are served, never refused"):

- a lone surrogate in a text (a value or a key) becomes U+FFFD;
- a non-text value in a text column becomes its ``str`` (bytes decoded as UTF-8, replacing);
- ``props`` that is not an object, or is empty, is ``None``; inside it, a non-finite float or an
  array or object nested deeper than :data:`MAX_PROPS_NESTING` levels becomes ``None``.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Levels of arrays and objects served in ``props`` (``props`` itself is level 1).
MAX_PROPS_NESTING = 32
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a code point UTF-8 cannot encode (a surrogate; pairs arrive from
    JSON already joined, so any surrogate left in a ``str`` is a lone one)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def wire_text(value: Any) -> str:
    """``value`` as text UTF-8 can encode (see the module's rules)."""
    if type(value) is not str:
        if value is None:
            return ""
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        value = str(value)
    return _SURROGATE.sub(REPLACEMENT, value) if has_lone_surrogate(value) else value


def is_wire_scalar(value: Any) -> bool:
    """Whether ``value`` is a props value every encoder writes as it is: ``None``, a bool, an
    int, a finite float or a text without lone surrogates."""
    kind = type(value)
    if kind is str:
        return not has_lone_surrogate(value)
    if kind is float:
        return math.isfinite(value)
    return kind is int or kind is bool or value is None


def _wire_value(value: Any, level: int) -> Any:
    """A props value at nesting ``level`` made encodable (``level`` bounds the recursion)."""
    if is_wire_scalar(value):
        return value
    if isinstance(value, (dict, list, tuple)):
        if level > MAX_PROPS_NESTING:
            return None
        if isinstance(value, dict):
            return {wire_text(k): _wire_value(v, level + 1) for k, v in value.items()}
        return [_wire_value(item, level + 1) for item in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    return wire_text(value)


def wire_props(value: Any) -> dict[str, Any] | None:
    """Stored ``props`` as an object every encoder writes (see the module's rules)."""
    if not isinstance(value, dict):
        return None
    return _wire_value(value, 1) or None
