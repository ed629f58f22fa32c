"""Making stored analytics values encodable: what a stored row holds never breaks the export.

Capture stores only valid Unicode text and flat ``props`` of scalars, but rows written by an
older version, a host store or SQL by hand may hold anything a JSON column or text column can:
lone surrogates (``"\\ud800"`` is valid JSON text on both SQLite and PostgreSQL), nesting,
non-finite floats, a ``props`` that is not an object. The export's readers turn such values into
ones every JSON encoder writes, always the same way (migration 0006 stores the same result):

- a lone surrogate in a text (a value or a key) becomes U+FFFD;
- a text column holding a non-text value becomes its ``str`` (bytes are decoded as UTF-8 with
  U+FFFD for what does not decode);
- ``props`` that is not an object is ``None``; inside it, a nested value (object or array) is
  dropped, a non-finite float becomes ``None``, and an empty result is ``None``.
"""

from __future__ import annotations

import math
import re
from typing import Any

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


def wire_props(value: Any) -> dict[str, Any] | None:
    """Stored ``props`` as a flat object every encoder writes (see the module's rules)."""
    if not isinstance(value, dict):
        return None
    props: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, (dict, list, tuple)):
            continue
        if not is_wire_scalar(item):
            if isinstance(item, bool):
                item = bool(item)
            elif isinstance(item, int):
                item = int(item)
            elif isinstance(item, float):
                item = float(item) if math.isfinite(item) else None
            else:
                item = wire_text(item)
        props[wire_text(key)] = item
    return props or None
