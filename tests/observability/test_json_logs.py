"""The JSON log line's shape (``observability.json_logs``): one object per record with a UTC
timestamp, level, logger and message, the traceback as ``exception``, the access-log fields
taken from already redacted gunicorn atoms; and an invalid ``log_format`` refused by name.
(Real ``serve`` and ``sync`` processes: tests/observability/test_observability_server.py.)"""

from __future__ import annotations

import json
import logging
import sys

import pytest

from newsletter_connector.log_redaction import redact_access_atoms
from newsletter_connector.observability.json_logs import (
    ACCESS_ATTRIBUTE,
    JsonFormatter,
    access_fields,
)
from newsletter_connector.settings import Settings, SettingsError


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord(
        "newsletter_connector.web", logging.WARNING, __file__, 1, message, args, None
    )
    made.created = 1795762312.5
    for name, value in extra.items():
        setattr(made, name, value)
    return made


def test_a_record_is_one_line_of_json_with_the_four_fields() -> None:
    line = JsonFormatter().format(record("database unavailable while serving %s", "GET /x\n"))
    assert "\n" not in line
    assert json.loads(line) == {
        "timestamp": "2026-11-27T06:51:52.500Z",
        "level": "WARNING",
        "logger": "newsletter_connector.web",
        "message": "database unavailable while serving GET /x\n",
    }


def test_a_traceback_is_one_field() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging_record = record("failed")
        logging_record.exc_info = sys.exc_info()
    entry = json.loads(JsonFormatter().format(logging_record))
    assert entry["message"] == "failed"
    assert "RuntimeError: boom" in entry["exception"]


def test_access_fields_come_from_the_redacted_atoms() -> None:
    atoms = redact_access_atoms(
        {
            "h": "203.0.113.9",
            "m": "GET",
            "U": "/confirm/SECRET-TOKEN",
            "q": "email=a@example.org",
            "H": "HTTP/1.1",
            "s": "200",
            "B": 512,
            "L": "0.012000",
            "f": "https://user:pw@example.org/profile/SECRET-TOKEN?x=1",
            "a": "bot (mailto:a@example.org)",
            "p": "<4242>",
        }
    )
    fields = access_fields(atoms)
    assert fields == {
        "method": "GET",
        "path": "/confirm/[redacted]",
        "protocol": "HTTP/1.1",
        "status": 200,
        "bytes": 512,
        "duration_seconds": 0.012,
        "referer": "https://example.org/profile/[redacted]",
        "user_agent": "bot (mailto:[redacted])",
        "pid": 4242,
    }
    line = JsonFormatter().format(record("GET", **{ACCESS_ATTRIBUTE: fields}))
    for secret in ("SECRET-TOKEN", "a@example.org", "203.0.113.9", "pw"):
        assert secret not in line


def test_an_unknown_log_format_is_refused_naming_the_setting() -> None:
    with pytest.raises(SettingsError, match=r"log_format \(env NEWSLETTER_LOG_FORMAT\)"):
        Settings.load({"NEWSLETTER_LOG_FORMAT": "xml"})
    assert Settings.load({"NEWSLETTER_LOG_FORMAT": "json"}).log_format == "json"
