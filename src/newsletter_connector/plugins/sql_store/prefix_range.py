"""A prefix search as a range of an index: ``column >= prefix AND column < successor``.

Unlike ``LIKE 'prefix%'`` the prefix is taken literally (no escaping of ``%``, ``_`` or ``\\``)
and the plan is an index range read on every backend. It relies on the column comparing in
code-point order: SQLite's default ``BINARY`` collation does; on PostgreSQL the column must be
declared ``COLLATE "C"`` (as ``nc_subscribers.email`` is), since a database's own collation may
be linguistic (ICU, libc ``en_US``), weighing punctuation, case and accents otherwise, and then
the range misses or adds values and keyset pages skip rows. A column of another collation
needs an index on ``column COLLATE "C"`` and ``column.collate("C")`` passed here and ordered by.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement

_MAX_CODE_POINT = 0x10FFFF


def prefix_successor(prefix: str) -> str | None:
    """The smallest string above every string starting with ``prefix`` (its last character
    raised by one), or ``None`` when there is none (``""``, or only U+10FFFF characters)."""
    stem = prefix.rstrip(chr(_MAX_CODE_POINT))
    if not stem:
        return None
    last = ord(stem[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # surrogates are not characters: skip to the next one
        last = 0xE000
    return stem[:-1] + chr(last)


def prefix_range(
    column: Any, prefix: str, *, after: str | None = None
) -> list[ColumnElement[bool]]:
    """The conditions selecting the values of ``column`` that start with ``prefix`` and, when
    ``after`` is given, sort above it (the keyset of the next page)."""
    conditions: list[ColumnElement[bool]] = []
    if prefix:
        conditions.append(column >= prefix)
    successor = prefix_successor(prefix)
    if successor is not None:
        conditions.append(column < successor)
    if after is not None:
        conditions.append(column > after)
    return conditions
