"""Strict query-parameter parsing for the Newsletter API and the export endpoints: each helper
raises :class:`InvalidRequest` naming the parameter. Every integer any surface reads goes through
:func:`decimal_integer` (docs/contributing/decisions/foundation.md, "One strict integer parser").
"""

from __future__ import annotations

import re
from datetime import date

import falcon

from ..errors import InvalidRequest

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DECIMAL = re.compile(r"-?[0-9]+")
_SIGNED_DECIMAL = re.compile(r"[+-]?[0-9]+")
#: More digits than any parameter's range needs (2**63 has 19).
MAX_INTEGER_DIGITS = 20


def decimal_integer(text: str, *, plus_sign: bool = False) -> int | None:
    """``text`` as a base-10 integer: ASCII digits, an optional ``-`` (or ``+`` with
    ``plus_sign``), at most :data:`MAX_INTEGER_DIGITS` digits, no spaces; else ``None``."""
    pattern = _SIGNED_DECIMAL if plus_sign else _DECIMAL
    if len(text) > MAX_INTEGER_DIGITS + 1 or not pattern.fullmatch(text):
        return None
    return int(text)


def single_param(req: falcon.Request, name: str) -> str | None:
    """The value of ``name`` if given once; ``None`` if absent. :raises InvalidRequest: repeated."""
    values = req.get_param_as_list(name)
    if values is None:
        return None
    if len(values) != 1:
        raise InvalidRequest(f"query parameter {name} may be given only once", field=name)
    return str(values[0])


def int_param(req: falcon.Request, name: str, *, default: int, minimum: int, maximum: int) -> int:
    """An integer query parameter within ``[minimum, maximum]``, or ``default`` when absent.
    :raises InvalidRequest: not an integer as :func:`decimal_integer` reads one, or out of range.
    """
    raw = single_param(req, name)
    if raw is None:
        return default
    value = decimal_integer(raw)
    if value is None:
        raise InvalidRequest(f"query parameter {name} must be an integer", field=name)
    if not minimum <= value <= maximum:
        raise InvalidRequest(
            f"query parameter {name} must be between {minimum} and {maximum}", field=name
        )
    return value


def enum_param(req: falcon.Request, name: str, allowed: tuple[str, ...]) -> str | None:
    """One of ``allowed``, or ``None`` when absent. :raises InvalidRequest: any other value."""
    raw = single_param(req, name)
    if raw is None:
        return None
    if raw not in allowed:
        raise InvalidRequest(
            f"query parameter {name} must be one of {', '.join(allowed)}", field=name
        )
    return raw


def date_param(req: falcon.Request, name: str) -> date:
    """A required ``YYYY-MM-DD`` query parameter naming a real calendar date.
    :raises InvalidRequest: absent, repeated, not in that form, or not a real date (2026-02-30).
    """
    raw = single_param(req, name)
    if raw is None:
        raise InvalidRequest(f"query parameter {name} is required (YYYY-MM-DD)", field=name)
    if not _ISO_DATE.fullmatch(raw):
        raise InvalidRequest(f"query parameter {name} must be a date as YYYY-MM-DD", field=name)
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise InvalidRequest(
            f"query parameter {name} is not a real calendar date", field=name
        ) from None


def reject_unknown_params(req: falcon.Request, allowed: tuple[str, ...]) -> None:
    """:raises InvalidRequest: a query parameter outside ``allowed`` (caught typos)."""
    for name in sorted(req.params):
        if name not in allowed:
            shown = name if len(name) <= 40 and name.isprintable() else name[:40] + "..."
            raise InvalidRequest(f"unknown query parameter {shown!r}", field=shown)
