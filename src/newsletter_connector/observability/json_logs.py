"""The ``log_format`` setting: one JSON object per line (``json``) or the readable line
(``text``) for the app's, the sync runner's and gunicorn's logs.

A JSON line holds ``timestamp`` (UTC, ISO 8601 with ``Z``), ``level``, ``logger`` and
``message``, an ``exception`` with the traceback when there is one, and for the access log the
fields :func:`access_fields` takes from the already redacted gunicorn atoms. Records are
redacted where they are written, as in text (``log_redaction``), so the two formats carry the
same words.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

#: The readable line of ``log_format = text`` (the runner's format so far).
TEXT_FORMAT = "%(asctime)s %(levelname)s %(message)s"
#: The attribute of a log record holding the access-log fields.
ACCESS_ATTRIBUTE = "access"


class JsonFormatter(logging.Formatter):
    """Formats a record as one line of JSON (see the module's docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created, timezone.utc)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, ACCESS_ATTRIBUTE, None)
        if isinstance(fields, Mapping):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of ``log_format`` (``text`` or ``json``)."""
    return JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)


def json_active() -> bool:
    """Whether this process's own records (the root logger's) are written as JSON lines."""
    return any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers)


def configure_logging(log_format: str, level: int = logging.INFO) -> None:
    """Send the root logger's records at ``level`` and above to stderr in ``log_format``,
    replacing any handler it had (a process's own logs: ``sync``, a ``serve`` worker's app)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(log_format))
    root.addHandler(handler)
    root.setLevel(level)


def _number(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def access_fields(atoms: Mapping[str, Any]) -> dict[str, Any]:
    """The access-log fields of a JSON line, from gunicorn atoms already passed through
    ``redact_access_atoms`` (so no client address, query string, token or credential)."""
    return {
        "method": atoms.get("m"),
        "path": atoms.get("U"),
        "protocol": atoms.get("H"),
        "status": _number(atoms.get("s")),
        "bytes": _number(atoms.get("B")),
        "duration_seconds": float(atoms["L"]) if atoms.get("L") else None,
        "referer": atoms.get("f"),
        "user_agent": atoms.get("a"),
        "pid": _number(str(atoms.get("p") or "").strip("<>")),
    }
