"""Keeping link tokens and keys out of logs (and out of analytics events).

Reader-page URLs carry a token in their path (``/confirm/<token>``) and query strings may
carry anything, so access logs written by our gunicorn setup pass through :func:`redact_path`.
:func:`redact_tokens` is the one recogniser of such tokens: it finds them anywhere in a text,
so under any mount prefix and in absolute URLs on any host; analytics capture uses it too.
"""

from __future__ import annotations

import re

#: Path segments that are followed by a secret token.
TOKEN_SEGMENTS = ("confirm", "unsubscribe", "profile")
_TOKEN_PATH = re.compile(r"/(" + "|".join(TOKEN_SEGMENTS) + r")/[^/?#]+")
REDACTED = "[redacted]"


def redact_tokens(text: str, replacement: str = REDACTED) -> str:
    """``text`` with every token after ``/confirm/``, ``/unsubscribe/`` and ``/profile/``
    (wherever it occurs) replaced by ``replacement``; nothing else changes."""
    return _TOKEN_PATH.sub(lambda m: f"/{m.group(1)}/{replacement}", text)


def redact_path(path: str) -> str:
    """``path`` with any query string dropped and tokens after ``/confirm/``,
    ``/unsubscribe/`` and ``/profile/`` replaced by ``[redacted]``."""
    return redact_tokens(path.split("?", 1)[0])
