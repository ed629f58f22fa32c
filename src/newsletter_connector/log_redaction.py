"""Keeping link tokens and keys out of logs.

Reader-page URLs carry a token in their path (``/confirm/<token>``) and query strings may
carry anything, so access logs written by our gunicorn setup pass through :func:`redact_path`.
"""

from __future__ import annotations

import re

#: Path segments that are followed by a secret token.
TOKEN_SEGMENTS = ("confirm", "unsubscribe", "profile")
_TOKEN_PATH = re.compile(r"/(" + "|".join(TOKEN_SEGMENTS) + r")/[^/?#]+")
REDACTED = "[redacted]"


def redact_path(path: str) -> str:
    """``path`` with any query string dropped and tokens after ``/confirm/``,
    ``/unsubscribe/`` and ``/profile/`` replaced by ``[redacted]``."""
    path = path.split("?", 1)[0]
    return _TOKEN_PATH.sub(lambda m: f"/{m.group(1)}/{REDACTED}", path)
