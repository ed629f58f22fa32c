"""``json_encoding``: the one encoder's form for what the wire shapes hold."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from newsletter_connector.json_encoding import dumps, dumps_text, json_values, raw_json


class HostDateTime(datetime):
    """A ``datetime`` subclass, as a host store's driver may return."""


def test_compact_utf8_in_insertion_order() -> None:
    value = {"b": "Zoë 😀 \u2028", "a": [1, True, None, 1.5], "c": {}}
    assert dumps(value) == '{"b":"Zoë 😀 \u2028","a":[1,true,null,1.5],"c":{}}'.encode()
    assert dumps_text(value) == dumps(value).decode()


def test_naive_datetimes_are_utc_with_z_and_microseconds_only_when_non_zero() -> None:
    assert dumps([datetime(2026, 11, 21, 9, 30), datetime(2026, 11, 21, 9, 30, 0, 250)]) == (
        b'["2026-11-21T09:30:00Z","2026-11-21T09:30:00.000250Z"]'
    )
    assert dumps(datetime(2026, 11, 21, 9, 30, tzinfo=timezone.utc)) == b'"2026-11-21T09:30:00Z"'


def test_a_datetime_subclass_is_written_in_utc_with_z() -> None:
    aware = HostDateTime(2026, 11, 21, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    assert dumps({"at": aware}) == b'{"at":"2026-11-21T09:30:00Z"}'


def test_integers_beyond_64_bits_are_written_exactly() -> None:
    value = {"big": 2**64, "neg": -(2**63) - 1, "nested": [[123456789012345678901234567890]]}
    written = dumps({"n": 1.5, **value})
    assert written == b'{"n":1.5,"big":18446744073709551616,"neg":-9223372036854775809,' + (
        b'"nested":[[123456789012345678901234567890]]}'
    )
    assert json.loads(written) == {"n": 1.5, **value}


def test_non_finite_floats_are_null() -> None:
    assert dumps([float("nan"), float("inf")]) == b"[null,null]"


def test_what_json_has_no_form_for_is_refused() -> None:
    for value in ({"x": object()}, {"x": {1, 2}}, {"x": "\ud800"}):
        with pytest.raises(TypeError):
            dumps(value)


def test_raw_json_is_spliced_unchanged_and_json_values_read_back() -> None:
    assert dumps({"payload": raw_json('{"a": 1}')}) == b'{"payload":{"a": 1}}'
    assert json_values({"at": datetime(2026, 1, 1)}) == {"at": "2026-01-01T00:00:00Z"}
