"""``web/fast_json.py``: orjson writes the app's JSON form byte-for-byte, or hands over."""

from __future__ import annotations

import dataclasses
import enum
import math
from datetime import datetime
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from newsletter_connector.web.fast_json import (
    STDLIB_DUMPS,
    dumps,
    float_written_alike,
    scalars_written_alike,
)


def stdlib(value: Any) -> bytes:
    return STDLIB_DUMPS(value).encode()


_text = st.text(st.characters(exclude_categories=["Cs"]))  # lone surrogates: no UTF-8
_alike_floats = st.floats(allow_nan=False, allow_infinity=False).filter(float_written_alike)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | _alike_floats
    | _text
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_text, inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_json)
def test_orjson_writes_the_stdlib_bytes(value: Any) -> None:
    assert dumps(value) == stdlib(value)


@given(st.floats())
def test_every_float_orjson_changes_is_refused(value: float) -> None:
    if orjson.dumps(value) != stdlib(value):
        assert not float_written_alike(value)
    assert dumps(value, floats_alike=float_written_alike(value)) == stdlib(value)


@pytest.mark.parametrize(
    ("value", "alike"),
    [
        (1e-05, False),  # stdlib 1e-05, orjson 0.00001
        (-2.5e-07, False),  # stdlib -2.5e-07, orjson -2.5e-7
        (1e-13, False),  # written alike, refused anyway: the rule is a range, not a list
        (math.nan, False),
        (math.inf, False),
        (-math.inf, False),
        (0.0, True),
        (-0.0, True),
        (1e-4, True),
        (1e16, True),
        (1.7976931348623157e308, True),
    ],
)
def test_float_edges(value: float, alike: bool) -> None:
    assert float_written_alike(value) is alike
    assert scalars_written_alike(["x", 1, None, value]) is alike
    if alike:
        assert orjson.dumps(value) == stdlib(value)


class Colour(str, enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    "value",
    [
        {"big": 2**64, "neg": -(2**63) - 1},  # beyond orjson's 64 bits
        {1: "non-str key", None: 2},
        {"colour": Colour.RED},  # a str subclass
        ["é€😀", "\u2028\x7f", "\x00\x1f", "</script>", 'q"\\'],
    ],
)
def test_values_orjson_refuses_or_could_change_go_to_the_stdlib(value: Any) -> None:
    assert dumps(value) == stdlib(value)


@pytest.mark.parametrize("value", [datetime(2026, 1, 1), Point(1), "\ud800"])
def test_what_the_stdlib_refuses_stays_refused(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        stdlib(value)
    with pytest.raises((TypeError, ValueError)):
        dumps(value)
