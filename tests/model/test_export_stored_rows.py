"""The export and rollups serve any stored analytics row: rows written by SQL by hand (as an
older version or a host store could have) with text no encoder takes, deep nesting, a props
that is not an object, non-finite numbers, answer 200 with well-formed JSON."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from newsletter_connector.json_encoding import dumps
from newsletter_connector.model.analytics import event_wire
from newsletter_connector.storage.records import AnalyticsEventRecord
from tests.support.analytics_helpers import client_for, clocked_service, connect
from tests.support.examples import examples

AT = datetime(2026, 3, 1, 12, 0, 0)
#: Deeper than every supported Python's json parser reads (3.10 and 3.11 stop near 1,000
#: levels, 3.12 and 3.13 near 10,000) and orjson's 1,024, but within PostgreSQL's json parser.
DEEP = 12_000


@pytest.fixture
def env(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    service, _ = clocked_service(newsletter_settings, newsletter_storage, AT)
    return service, client_for(service), connect(service)


def dialect(service: Any) -> str:
    return str(service.storage.engine.dialect.name)


def insert_row(service: Any, props: str | None, **columns: Any) -> None:
    """One event row written by SQL, ``props`` as JSON text (cast to ``json`` on PostgreSQL);
    a :class:`SqlValue` column is written as its SQL text."""
    values = {
        "occurred_at": AT, "day": AT.date(), "event_type": "pageview", "visitor_id": "visitor-1",
        "session_id": "session-1", "path": "/a", "referrer": "", "engaged_seconds": None,
        **columns, "props": props,
    }  # fmt: skip
    sql = {name: value.sql for name, value in values.items() if isinstance(value, SqlValue)}
    sql.setdefault(
        "props", "CAST(:props AS JSON)" if dialect(service) == "postgresql" else ":props"
    )
    statement = text(
        f"INSERT INTO nc_analytics_events ({', '.join(values)}) "
        f"VALUES ({', '.join(sql.get(name, f':{name}') for name in values)})"
    )
    with service.storage.engine.begin() as connection:
        connection.execute(
            statement, {k: v for k, v in values.items() if k not in sql or k == "props"}
        )


class SqlValue:
    """A column value written as SQL text (for values no driver binds, e.g. NaN)."""

    def __init__(self, sql: str) -> None:
        self.sql = sql


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def well_formed(result: Any) -> Any:
    """The answer's body parsed strictly: UTF-8, RFC 8259 JSON (no NaN or Infinity)."""
    assert result.status_code == 200, result.text
    return json.loads(result.content.decode("utf-8"), parse_constant=_refuse_constant)


def exported_props(client: Any, auth: dict[str, str]) -> list[Any]:
    body = well_formed(client.simulate_get("/api/export/events", headers=auth))
    return [event["props"] for event in body["events"]]


def rollup(client: Any, auth: dict[str, str]) -> dict[str, Any]:
    day = AT.date().isoformat()
    result = client.simulate_get(
        "/api/export/rollups", headers=auth, params={"from": day, "to": day}
    )
    (entry,) = well_formed(result)["rollups"]
    return dict(entry)


NESTED = "[" * DEEP + "]" * DEEP


def lists(levels: int) -> Any:
    """``levels`` arrays, each holding the next, the innermost holding ``null``."""
    value = None
    for _ in range(levels):
        value = [value]
    return value


# Stored props text -> what the export serves for it, on both databases.
STORED_PROPS = {
    "lone-surrogate": ('{"a":"x\\ud800y","b":1}', {"a": "x\ufffdy", "b": 1}),
    "lone-surrogate-key": ('{"k\\udc00":"v"}', {"k\ufffd": "v"}),
    "surrogate-pair": ('{"a":"\\ud83d\\ude00"}', {"a": "\U0001f600"}),
    "deep-nesting": ('{"a":' + NESTED + ',"b":1}', None),
    "deep-object": ('{"a":' + '{"b":' * DEEP + "1" + "}" * DEEP + "}", None),
    # Levels beyond the bound (props is level 1) are served as null; shallower ones as stored.
    "nesting-300": ('{"a":' + "[" * 300 + "]" * 300 + ',"b":1}', {"a": lists(31), "b": 1}),
    "nested-values": ('{"a":[1],"b":{"c":2.5},"d":"e"}', {"a": [1], "b": {"c": 2.5}, "d": "e"}),
    "nested-bad": ('{"a":[{"\\udfff":"\\ud800"}]}', {"a": [{"\ufffd": "\ufffd"}]}),
    "array": ("[1,2]", None),
    "string": ('"text"', None),
    "number": ("7", None),
    "null": ("null", None),
    "big-int": ('{"n":123456789012345678901234567890}', {"n": 123456789012345678901234567890}),
}
# Texts only SQLite's TEXT column holds (PostgreSQL's json type refuses them).
SQLITE_ONLY_PROPS = {
    "not-json": ("{not json", None),
    "nan": ('{"a":NaN,"b":[Infinity]}', {"a": None, "b": [None]}),
    "infinity": ('{"a":-Infinity}', {"a": None}),
    "overflow": ('{"a":1e999}', {"a": None}),
}


@pytest.mark.parametrize("case", [*STORED_PROPS, *SQLITE_ONLY_PROPS])
def test_events_serve_any_stored_props(env: Any, case: str) -> None:
    service, client, auth = env
    if case in SQLITE_ONLY_PROPS and dialect(service) != "sqlite":
        pytest.skip("PostgreSQL's json type cannot hold this text")
    stored, served = {**STORED_PROPS, **SQLITE_ONLY_PROPS}[case]
    insert_row(service, stored)
    service.analytics.record_event(
        "pageview", visitor_id="visitor-2", session_id="session-2", path="/b"
    )
    assert exported_props(client, auth) == [served, None]
    assert rollup(client, auth)["pageviews"] == 2


def test_all_bad_rows_together_page_through(env: Any) -> None:
    service, client, auth = env
    cases = dict(STORED_PROPS)
    if dialect(service) == "sqlite":
        cases.update(SQLITE_ONLY_PROPS)
    for stored, _ in cases.values():
        insert_row(service, stored)
    assert exported_props(client, auth) == [served for _, served in cases.values()]
    body = well_formed(client.simulate_get("/api/export/events?limit=3", headers=auth))
    assert len(body["events"]) == 3


def test_rollups_serve_non_finite_engagement(env: Any) -> None:
    service, client, auth = env
    if dialect(service) in ("mysql", "mariadb"):
        pytest.skip("MySQL's and MariaDB's DOUBLE holds no NaN and no infinity")
    # PostgreSQL's float8 holds NaN; SQLite turns an overflowing literal into infinity.
    value = "CAST('NaN' AS DOUBLE PRECISION)" if dialect(service) == "postgresql" else "9e999"
    insert_row(service, None, event_type="engagement ping", engaged_seconds=SqlValue(value))
    insert_row(service, None, event_type="engagement ping", engaged_seconds=2.0)
    assert rollup(client, auth)["avg_engagement_seconds"] is None


def test_sqlite_non_text_path_is_served_as_text(env: Any) -> None:
    service, client, auth = env
    if dialect(service) != "sqlite":
        pytest.skip("only SQLite's dynamic typing stores a number in a text column")
    insert_row(service, None, path=SqlValue("12345"), referrer=SqlValue("X'2F61'"))
    body = well_formed(client.simulate_get("/api/export/events", headers=auth))
    assert (body["events"][0]["path"], body["events"][0]["referrer"]) == ("12345", "/a")
    assert rollup(client, auth)["top_pages"] == [{"path": "12345", "views": 1}]


# -- records of any store ----------------------------------------------------------------------

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(any_text, children, max_size=3)
    ),
    max_leaves=10,
)
records = st.builds(
    AnalyticsEventRecord,
    id=st.integers(1, 2**62),
    occurred_at=st.just(AT),
    event_type=st.sampled_from(["pageview", "link click", "engagement ping"]),
    visitor_id=any_text,
    session_id=any_text,
    path=any_text,
    referrer=any_text,
    props=any_json,
    engaged_seconds=st.none(),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record=records)
def test_any_record_is_written_as_well_formed_json(record: AnalyticsEventRecord) -> None:
    wire = event_wire(record)
    written = dumps(wire)
    parsed = json.loads(written.decode("utf-8"), parse_constant=_refuse_constant)
    assert parsed == {**wire, "occurred_at": "2026-03-01T12:00:00Z"}


def test_sqlite_text_that_is_not_utf8_is_served_with_replacement_characters(env: Any) -> None:
    service, client, auth = env
    if dialect(service) != "sqlite":
        pytest.skip("only SQLite's TEXT holds bytes that are not UTF-8")
    insert_row(
        service,
        None,
        path=SqlValue("CAST(X'2FFF61' AS TEXT)"),  # "/", 0xFF, "a"
        referrer=SqlValue("CAST(X'68747470733A2F2F722E6578616D706C652F80' AS TEXT)"),
        visitor_id=SqlValue("CAST(X'76C0' AS TEXT)"),
    )
    with service.storage.engine.begin() as connection:  # {"k":"<0x80 0xFF>"}
        connection.execute(
            text("UPDATE nc_analytics_events SET props = CAST(X'7B226B223A2280FF227D' AS TEXT)")
        )
    (event,) = well_formed(client.simulate_get("/api/export/events", headers=auth))["events"]
    assert (event["path"], event["referrer"], event["visitor_id"], event["props"]) == (
        "/\ufffda", "https://r.example/\ufffd", "v\ufffd", {"k": "\ufffd\ufffd"},
    )  # fmt: skip
    assert rollup(client, auth)["top_pages"] == [{"path": "/\ufffda", "views": 1}]
