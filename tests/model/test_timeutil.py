"""The wire's timestamp form (``isoformat_z``): UTC, ``Z``, microseconds only when present."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from newsletter_connector.timeutil import isoformat_z


def test_none_stays_none() -> None:
    assert isoformat_z(None) is None


def test_whole_seconds_have_no_fraction() -> None:
    assert isoformat_z(datetime(2026, 11, 21, 9, 30)) == "2026-11-21T09:30:00Z"


def test_microseconds_are_kept_in_full() -> None:
    assert isoformat_z(datetime(2026, 11, 21, 9, 30, 0, 5)) == "2026-11-21T09:30:00.000005Z"


def test_aware_values_are_written_in_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert isoformat_z(datetime(2026, 11, 21, 11, 30, tzinfo=plus_two)) == "2026-11-21T09:30:00Z"


@given(st.datetimes(timezones=st.none() | st.timezones()))
def test_round_trips_to_the_same_instant(value: datetime) -> None:
    written = isoformat_z(value)
    assert written is not None and written.endswith("Z")
    read = datetime.fromisoformat(written[:-1])
    expected = value if value.tzinfo is None else value.astimezone(timezone.utc)
    assert read == expected.replace(tzinfo=None)
    assert ("." in written) == (read.microsecond != 0)
