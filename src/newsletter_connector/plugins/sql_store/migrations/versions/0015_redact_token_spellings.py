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

import codecs
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH_ROWS = 1000

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


#: ``service.analytics_sanitize._TOKEN_LIKE_WORD``
_TOKEN_LIKE_WORD = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{22,}(?![A-Za-z0-9_-])")
#: ``service.analytics_sanitize._PATH_SAFE``
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def redact_path_tokens(path: str) -> str:
    """``service.analytics_sanitize.redact_path_tokens``: ``path`` with every action-link token
    redacted, quoted again when one was found."""
    redacted = redact_tokens(path, REDACTED)
    return path if redacted == path else quote(redacted, safe=_PATH_SAFE)


def _random_looking(word: str) -> bool:
    """``service.analytics_sanitize._random_looking``"""
    kinds = (
        any(c.isupper() for c in word),
        any(c.islower() for c in word),
        any(c.isdigit() for c in word),
    )
    return sum(kinds) >= 2


def _redact_bare_tokens(text: str) -> str:
    """``service.analytics_sanitize.redact_bare_tokens``"""
    return _substitute_decoded(
        text, _TOKEN_LIKE_WORD, lambda m: REDACTED if _random_looking(m.group(0)) else None, 1
    )


def redact_prop_text(text: str) -> str:
    """``service.analytics_sanitize.redact_prop_text``: action-link tokens redacted, after a
    token segment or bare."""
    return _redact_bare_tokens(redact_tokens(text, REDACTED))


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
