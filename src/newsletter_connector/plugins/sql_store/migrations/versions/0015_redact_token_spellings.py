"""Stored analytics events hold no action-link token in any spelling

Capture now finds tokens however they are spelt (``/profile%2F<token>``, any case, ``\\`` for
``/``, percent-encoded, without the leading slash in props, a bare token in props); rows stored
before are brought to what capture stores now: ``path`` and ``referrer`` through
``analytics_sanitize.redact_path_tokens``, each props text through ``redact_prop_text``. Every
row is read in batches by id; only rows that change are written.

No schema changes; downgrade changes nothing (the tokens are gone).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 07:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from newsletter_connector.service.analytics_sanitize import redact_path_tokens, redact_prop_text

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH_ROWS = 1000

_events = sa.table(
    "nc_analytics_events",
    sa.column("id", sa.BigInteger()),
    sa.column("path", sa.String()),
    sa.column("referrer", sa.String()),
    sa.column("props", sa.JSON(none_as_null=True)),
)


def _redacted_props(props: Any) -> Any:
    if not isinstance(props, dict):
        return props
    return {k: redact_prop_text(v) if isinstance(v, str) else v for k, v in props.items()}


def upgrade() -> None:
    bind = op.get_bind()
    e = _events.c
    query = sa.select(e.id, e.path, e.referrer, e.props).order_by(e.id).limit(BATCH_ROWS)
    after = 0
    while rows := bind.execute(query.where(e.id > after)).all():
        changes = []
        for row_id, path, referrer, props in rows:
            repaired = {
                "path": redact_path_tokens(path) if path else path,
                "referrer": redact_path_tokens(referrer) if referrer else referrer,
                "props": _redacted_props(props),
            }
            if repaired != {"path": path, "referrer": referrer, "props": props}:
                changes.append({"row_id": row_id, **repaired})
        if changes:
            bind.execute(
                _events.update()
                .where(e.id == sa.bindparam("row_id"))
                .values(
                    path=sa.bindparam("path"),
                    referrer=sa.bindparam("referrer"),
                    props=sa.bindparam("props"),
                ),
                changes,
            )
        after = rows[-1][0]


def downgrade() -> None:
    pass
