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

from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from newsletter_connector.log_redaction import TOKEN_SEGMENTS, redact_tokens
from newsletter_connector.model.wire_safe import wire_props
from newsletter_connector.plugins.sql_store.stored_json import stored_json_loads
from newsletter_connector.service.analytics_sanitize import REDACTED

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH_ROWS = 1000

_UNREADABLE = object()

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
