"""Stored analytics events hold only values every JSON encoder writes

Older rows are repaired to what the export already serves (``model.wire_safe``), in batches
by id, writing only rows that change:

- ``props`` becomes ``wire_props(lenient_json_loads(text))`` (SQL ``NULL`` when it is not an
  object or no parser reads it);
- action-link tokens in ``path``, ``referrer`` and ``props`` text become ``redacted``, as
  capture stores them (``log_redaction.redact_tokens``);
- SQLite text that is not UTF-8 gets U+FFFD, in every text column, first;
- a non-finite ``engaged_seconds`` becomes ``NULL``.

No schema changes; downgrade changes nothing.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 19:00:00.000000
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH_ROWS = 1000

_UNREADABLE = object()

# Frozen copies of the package code this revision runs, as it was when the revision was
# written: a migration does tomorrow exactly what it did yesterday, whatever the live code
# becomes. Never edit them to follow the package; a later change is a later revision.

#: ``service.analytics_sanitize.REDACTED``
REDACTED = "redacted"
#: ``log_redaction.TOKEN_SEGMENTS``
TOKEN_SEGMENTS = ("confirm", "unsubscribe", "profile")
_TOKEN_PATH = re.compile(
    r"(?<![A-Za-z0-9])(" + "|".join(TOKEN_SEGMENTS) + r")[/\\]+[^/\\?#\s]+", re.IGNORECASE
)
_DECODE_LAYERS = 3
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unquote_mapped(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``log_redaction._unquote_mapped``: ``text`` percent-decoded once, and for each decoded
    character the ``(start, end)`` of the part of ``text`` it was decoded from."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    done = 0
    for run in _PERCENT_RUN.finditer(text):
        for i in range(done, run.start()):
            out.append(text[i])
            spans.append((i, i + 1))
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = run.start()
        for at in range(run.start(), run.end(), 3):
            chars = decoder.decode(bytes([int(text[at + 1 : at + 3], 16)]))
            if chars:
                out.extend(chars)
                spans.extend([(pending, at + 3)] * len(chars))
                pending = at + 3
        if chars := decoder.decode(b"", final=True):
            out.extend(chars)
            spans.extend([(pending, run.end())] * len(chars))
        done = run.end()
    for i in range(done, len(text)):
        out.append(text[i])
        spans.append((i, i + 1))
    return "".join(out), spans


def _substitute_decoded(
    text: str,
    pattern: re.Pattern[str],
    replace: Callable[[re.Match[str]], str | None],
    layers: int = _DECODE_LAYERS,
) -> str:
    """``log_redaction.substitute_decoded``: ``text`` with each match of ``pattern`` in its
    percent-decoded form replaced in the part of the original text it was decoded from."""
    decoded = text
    spans = [(i, i + 1) for i in range(len(text))]
    for _ in range(layers):
        once, layer = _unquote_mapped(decoded)
        if once == decoded:
            break
        decoded = once
        spans = [(spans[a][0], spans[b - 1][1]) for a, b in layer]
    pieces: list[str] = []
    done = 0
    for match in pattern.finditer(decoded):
        replacement = replace(match)
        if replacement is None or match.end() == match.start():
            continue
        start, end = spans[match.start()][0], spans[match.end() - 1][1]
        if start < done:
            continue
        pieces += [text[done:start], replacement]
        done = end
    return "".join(pieces) + text[done:] if pieces else text


def redact_tokens(text: str, replacement: str) -> str:
    """``log_redaction.redact_tokens``: every token after a token segment, in any spelling,
    replaced by ``{segment}/{replacement}``."""
    return _substitute_decoded(text, _TOKEN_PATH, lambda m: f"{m.group(1)}/{replacement}")


#: ``model.wire_safe.MAX_PROPS_NESTING``
_MAX_PROPS_NESTING = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def _wire_text(value: Any) -> str:
    """``model.wire_safe.wire_text``"""
    if type(value) is not str:
        if value is None:
            return ""
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        value = str(value)
    return _SURROGATE.sub("\ufffd", value) if _has_lone_surrogate(value) else value


def _is_wire_scalar(value: Any) -> bool:
    """``model.wire_safe.is_wire_scalar``"""
    kind = type(value)
    if kind is str:
        return not _has_lone_surrogate(value)
    if kind is float:
        return math.isfinite(value)
    return kind is int or kind is bool or value is None


def _wire_value(value: Any, level: int) -> Any:
    """``model.wire_safe._wire_value``"""
    if _is_wire_scalar(value):
        return value
    if isinstance(value, (dict, list, tuple)):
        if level > _MAX_PROPS_NESTING:
            return None
        if isinstance(value, dict):
            return {_wire_text(k): _wire_value(v, level + 1) for k, v in value.items()}
        return [_wire_value(item, level + 1) for item in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    return _wire_text(value)


def wire_props(value: Any) -> dict[str, Any] | None:
    """``model.wire_safe.wire_props``: stored ``props`` as an object every encoder writes."""
    if not isinstance(value, dict):
        return None
    return _wire_value(value, 1) or None


def stored_json_loads(data: str | bytes) -> Any:
    """``sql_store.stored_json.stored_json_loads``, whose contract is ``json.loads``'s value
    and errors (orjson there is only a speed path)."""
    return json.loads(data)


_events = sa.table(
    "nc_analytics_events",
    sa.column("id", sa.BigInteger()),
    sa.column("path", sa.String()),
    sa.column("referrer", sa.String()),
    sa.column("props", sa.JSON(none_as_null=True)),
)


def _without_tokens(props: dict[str, Any] | None) -> dict[str, Any] | None:
    """``props`` with action-link tokens redacted in its text values, as capture does."""
    if props is None:
        return None
    return {k: redact_tokens(v, REDACTED) if isinstance(v, str) else v for k, v in props.items()}


def _parsed(text: str) -> Any:
    """``lenient_json_loads(text)``, but :data:`_UNREADABLE` where that gives ``None`` for a
    text no parser reads (such a row is written, as ``NULL``)."""
    try:
        return stored_json_loads(text)
    except (ValueError, RecursionError):
        return _UNREADABLE


def _unchanged(stored: Any, repaired: dict[str, Any] | None) -> bool:
    """Whether writing ``repaired`` would leave the stored value as the export serves it (an
    empty object and ``null`` are both served as ``null``)."""
    if stored is None or stored == {}:
        return repaired is None
    return type(stored) is dict and stored == repaired


def _batches(bind: sa.Connection, query: sa.Select[Any]) -> Iterator[Sequence[Any]]:
    """``query``'s rows (the event id first), read in batches by id."""
    after = 0
    while rows := bind.execute(
        query.where(_events.c.id > after).order_by(_events.c.id).limit(BATCH_ROWS)
    ).all():
        yield rows
        after = rows[-1][0]


def _repair_props(bind: sa.Connection) -> None:
    postgres = bind.dialect.name == "postgresql"
    if postgres:
        bind.execute(
            sa.text(
                "UPDATE nc_analytics_events SET props = NULL WHERE props IS NOT NULL "
                "AND json_typeof(props) NOT IN ('object', 'null')"
            )
        )
    props_text = sa.cast(_events.c.props, sa.Text())
    query = sa.select(_events.c.id, props_text).where(_events.c.props.is_not(None))
    for rows in _batches(bind, query):
        changes = []
        for row_id, text in rows:
            stored = _parsed(text)
            repaired = None if stored is _UNREADABLE else _without_tokens(wire_props(stored))
            if not _unchanged(stored, repaired):
                changes.append({"row_id": row_id, "props": repaired})
        if changes:
            bind.execute(
                _events.update()
                .where(_events.c.id == sa.bindparam("row_id"))
                .values(props=sa.bindparam("props")),
                changes,
            )


def _redact_path_tokens(bind: sa.Connection) -> None:
    e = _events.c
    mentions = sa.or_(
        *(
            column.like(f"%/{segment}/%")
            for column in (e.path, e.referrer)
            for segment in TOKEN_SEGMENTS
        )
    )
    for rows in _batches(bind, sa.select(e.id, e.path, e.referrer).where(mentions)):
        changes = [
            {
                "row_id": row_id,
                "path": redact_tokens(path, REDACTED),
                "referrer": redact_tokens(referrer, REDACTED),
            }
            for row_id, path, referrer in rows
        ]
        bind.execute(
            _events.update()
            .where(e.id == sa.bindparam("row_id"))
            .values(path=sa.bindparam("path"), referrer=sa.bindparam("referrer")),
            changes,
        )


def _repair_engaged_seconds(bind: sa.Connection) -> None:
    if bind.dialect.name == "postgresql":
        op.execute(
            "UPDATE nc_analytics_events SET engaged_seconds = NULL "
            "WHERE engaged_seconds IN ('NaN', 'Infinity', '-Infinity')"
        )
    else:  # SQLite stores NaN as NULL already; 9e999 reads as infinity
        op.execute(
            "UPDATE nc_analytics_events SET engaged_seconds = NULL "
            "WHERE abs(engaged_seconds) > 1.7976931348623157e308"
        )


_TEXT_COLUMNS = ("event_type", "visitor_id", "session_id", "path", "referrer", "props")


def _utf8_or_none(data: bytes | None) -> str | None:
    """``data`` decoded, or ``None`` when it is UTF-8 already (or ``NULL``)."""
    if data is None:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")
    return None


def _repair_sqlite_utf8(bind: sa.Connection) -> None:
    raw = bind.connection.dbapi_connection
    raw.create_function("nc_utf8_repaired", 1, _utf8_or_none, deterministic=True)  # type: ignore[union-attr]
    for column in _TEXT_COLUMNS:
        repaired = f"nc_utf8_repaired(CAST({column} AS BLOB))"
        op.execute(
            f"UPDATE nc_analytics_events SET {column} = {repaired} "  # noqa: S608 (names above)
            f"WHERE typeof({column}) = 'text' AND {repaired} IS NOT NULL"
        )


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        _repair_sqlite_utf8(bind)
    _repair_props(bind)
    _redact_path_tokens(bind)
    _repair_engaged_seconds(bind)


def downgrade() -> None:
    pass
