"""UTC time helpers: one clock for the whole service, ISO-8601 with ``Z`` on the wire."""

from __future__ import annotations

from datetime import datetime, timezone


def utcnow() -> datetime:
    """The current time as a naive UTC datetime (the storage convention)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def to_naive_utc(value: datetime) -> datetime:
    """``value`` converted to UTC and stripped of tzinfo; naive values are taken as UTC."""
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def parse_timestamp(value: str) -> datetime | None:
    """An ISO-8601 timestamp with an explicit offset (``Z`` or ``±hh:mm``) as naive UTC, or
    ``None`` when it does not parse or carries no offset."""
    text = value.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None or "T" not in text.upper():
        return None
    try:
        return to_naive_utc(parsed)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 is before datetime.min in UTC
        return None


def isoformat_z(value: datetime | None) -> str | None:
    """ISO-8601 UTC with a ``Z`` suffix (``2026-11-21T09:30:00Z``), microseconds only when
    non-zero (so two timestamps in one second stay ordered); ``None`` for ``None``."""
    if value is None:
        return None
    return to_naive_utc(value).isoformat() + "Z"
