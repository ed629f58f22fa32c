"""``stored_json_loads`` gives what ``json.loads`` gives, type for type, or raises as it does."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.stored_json import stored_json_loads

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 5, max_value=2**64 + 5)
    | st.integers(min_value=-(2**64) - 5, max_value=-(2**63) + 5)
    | st.floats()
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=12,
)


def typed(value: Any) -> Any:
    """``value`` with every leaf tagged by its type (so ``1 != 1.0`` and NaN equals NaN)."""
    if isinstance(value, dict):
        return ("dict", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [typed(item) for item in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def outcome(loads: Any, text: str | bytes) -> Any:
    try:
        return typed(loads(text))
    except ValueError as error:
        return ("raised", type(error).__name__)


@given(json_values, st.booleans())
def test_agrees_with_the_stdlib_on_what_the_stdlib_writes(value: Any, as_bytes: bool) -> None:
    text = json.dumps(value, ensure_ascii=False)
    data = text.encode("utf-8", "surrogatepass") if as_bytes else text
    if as_bytes and any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # not valid UTF-8: psycopg never hands such bytes over
    assert outcome(stored_json_loads, data) == outcome(json.loads, data)


@pytest.mark.parametrize(
    "text",
    [
        "18446744073709551616",  # orjson alone would give a float
        '[1, [2, {"a": 18446744073709551616}]]',
        '{"a": [-18446744073709551617]}',
        "9223372036854775808",
        "1e19",
        "[-1e19, 1.5]",
        "-9223372036854775809",
        '{"n": 123456789012345678901234567890}',
        "1E400",
        "-1e400",
        "NaN",
        "[Infinity, -Infinity]",
        '"\\ud800"',
        "-0",
        "1e-400",
        '{"a": 1, "a": 2}',
        "[1,]",
        "nul",
        "",
        '"a\x00"',
    ],
)
def test_agrees_with_the_stdlib_on_edge_texts(text: str) -> None:
    assert outcome(stored_json_loads, text) == outcome(json.loads, text)
    assert outcome(stored_json_loads, text.encode("utf-8", "surrogatepass")) == outcome(
        json.loads, text.encode("utf-8", "surrogatepass")
    )


@given(st.text(max_size=30))
def test_agrees_with_the_stdlib_on_any_text(text: str) -> None:
    assert outcome(stored_json_loads, text) == outcome(json.loads, text)


def test_the_store_engine_reads_json_columns_with_it(tmp_path: Any) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'json.db'}")
    assert engine.dialect._json_deserializer is stored_json_loads
    engine.dispose()
