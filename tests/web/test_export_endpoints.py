"""docs/export.md: the Connector export endpoints, through create_app."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from tests.support.analytics_helpers import TOKEN, client_for, clocked_service, connect, pageview
from tests.support.docblocks import docblock, same_shape

T0 = datetime(2026, 3, 1, 12, 0, 0)


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, T0)[0]


@pytest.fixture
def client(service: Any) -> Any:
    return client_for(service)


@pytest.fixture
def auth(service: Any) -> dict[str, str]:
    return connect(service)


#: Paths no route serves: outside every surface, merely sharing the prefix's letters, and under
#: the export prefix. The export 404 is the site's own page for an address that does not exist
#: (docs/export.md, "Errors").
UNKNOWN_PATHS = ("/no-such-path", "/api/exportx", "/api/export/no-such-endpoint")


def _same_as_unknown_path(client: Any, result: Any, method: str = "GET") -> None:
    """``result`` is, byte for byte (status, every header, body), the app's answer to ``method``
    on a path that does not exist: the reader pages' 404 page."""
    for path in UNKNOWN_PATHS:
        reference = client.simulate_request(method, path)
        assert result.status_code == reference.status_code == 404, path
        assert result.content == reference.content, path
        assert sorted(result.headers.items()) == sorted(reference.headers.items()), path
    assert result.headers["content-type"] == "text/html; charset=utf-8"
    assert result.headers["cache-control"] == "no-store"


# -- authentication ---------------------------------------------------------------------------


def test_status_is_ok_with_the_connection_token(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_get("/api/export/status", headers=auth)
    assert result.status_code == 200
    assert result.json == {"ok": True}
    assert result.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    "path", ["/api/export/status", "/api/export/events", "/api/export/rollups"]
)
@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer wrong-token-0123456789",
        f"Basic {TOKEN}",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN} extra",
    ],
)
def test_missing_or_wrong_token_is_the_unknown_path_404(
    client: Any, auth: dict[str, str], path: str, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    _same_as_unknown_path(client, client.simulate_get(path, headers=headers))


@pytest.mark.parametrize("path", ["/api/export/status", "/api/export/events"])
def test_no_connection_is_the_unknown_path_404(client: Any, path: str) -> None:
    result = client.simulate_get(path, headers={"Authorization": f"Bearer {TOKEN}"})
    _same_as_unknown_path(client, result)


def test_disabled_connection_is_the_unknown_path_404(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    assert client.simulate_get("/api/export/status", headers=auth).status_code == 200
    service.admin.disable_connection()
    _same_as_unknown_path(client, client.simulate_get("/api/export/status", headers=auth))


def test_replaced_token_stops_working_at_once(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    new = connect(service, "a-brand-new-token-0123456789")
    _same_as_unknown_path(client, client.simulate_get("/api/export/status", headers=auth))
    assert client.simulate_get("/api/export/status", headers=new).status_code == 200


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"])
def test_every_method_without_token_is_the_unknown_path_404(
    client: Any, auth: dict[str, str], method: str
) -> None:
    for path in ("/api/export/status", "/api/export/events", "/api/export"):
        _same_as_unknown_path(client, client.simulate_request(method, path), method)
        bad_token = {"Authorization": "Bearer wrong-token-0123456789"}
        _same_as_unknown_path(
            client, client.simulate_request(method, path, headers=bad_token), method
        )


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "OPTIONS"])
def test_under_a_mount_prefix_the_404_is_the_unknown_path_404(
    client: Any, auth: dict[str, str], method: str
) -> None:
    mounted = {"root_path": "/newsletter"}
    reference = client.simulate_request(method, "/no-such-path", **mounted)
    for path in ("/api/export/events", "/api/export/status"):
        result = client.simulate_request(method, path, **mounted)
        assert result.status_code == reference.status_code == 404
        assert result.content == reference.content
        assert sorted(result.headers.items()) == sorted(reference.headers.items())


def test_bad_query_without_token_is_404_not_400(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_get("/api/export/rollups", query_string="from=nope")
    _same_as_unknown_path(client, result)


def test_wrong_method_with_token_is_405(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_post("/api/export/events", headers=auth)
    assert result.status_code == 405
    assert result.headers["allow"] == "GET"
    assert result.json["error"] == "method_not_allowed"


def test_unknown_path_with_token_is_404(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_get("/api/export/statuses", headers=auth)
    _same_as_unknown_path(client, result)


def test_token_never_appears_in_responses(client: Any, auth: dict[str, str]) -> None:
    for path in ("/api/export/status", "/api/export/events?limit=0", "/api/export/x"):
        assert TOKEN not in client.simulate_get(path, headers=auth).text


def test_status_has_no_side_effects(client: Any, service: Any, auth: dict[str, str]) -> None:
    before = client.simulate_get("/api/export/events", headers=auth).json
    client.simulate_get("/api/export/status", headers=auth)
    assert client.simulate_get("/api/export/events", headers=auth).json == before


# -- events -----------------------------------------------------------------------------------


def test_events_walk_with_cursor(client: Any, service: Any, auth: dict[str, str]) -> None:
    ids = [pageview(service, f"/p{n}", referrer="https://ref.example/x") for n in range(5)]
    first = client.simulate_get("/api/export/events", headers=auth, params={"limit": "2"}).json
    assert [e["id"] for e in first["events"]] == ids[:2]
    assert first["next_after_id"] == ids[1]
    event = first["events"][0]
    assert event == {
        "id": ids[0],
        "occurred_at": "2026-03-01T12:00:00Z",
        "event_type": "pageview",
        "visitor_id": "visitor-1",
        "session_id": "session-1",
        "path": "/p0",
        "referrer": "https://ref.example/x",
        "props": None,
    }
    second = client.simulate_get(
        "/api/export/events", headers=auth, params={"after_id": str(first["next_after_id"])}
    ).json
    assert [e["id"] for e in second["events"]] == ids[2:]
    assert second["next_after_id"] == ids[-1]
    caught_up = client.simulate_get(
        "/api/export/events", headers=auth, params={"after_id": str(ids[-1])}
    ).json
    assert caught_up == {"events": [], "next_after_id": ids[-1]}


def test_caught_up_cursor_is_echoed_even_beyond_the_last_id(
    client: Any, auth: dict[str, str]
) -> None:
    result = client.simulate_get("/api/export/events", headers=auth, params={"after_id": "987654"})
    assert result.json == {"events": [], "next_after_id": 987654}


def test_events_default_limit_is_500_and_max_1000(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    with service.storage.transaction() as uow:
        for n in range(1001):
            uow.analytics.add_event(
                occurred_at=T0,
                event_type="pageview",
                visitor_id="visitor-1",
                session_id="session-1",
                path=f"/{n}",
                referrer="",
                props=None,
                engaged_seconds=None,
            )
    assert len(client.simulate_get("/api/export/events", headers=auth).json["events"]) == 500
    full = client.simulate_get("/api/export/events", headers=auth, params={"limit": "1000"}).json
    assert len(full["events"]) == 1000
    rest = client.simulate_get(
        "/api/export/events", headers=auth, params={"after_id": str(full["next_after_id"])}
    ).json
    assert len(rest["events"]) == 1


def test_event_props_carry_href_and_engaged_seconds(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    common = {"visitor_id": "visitor-1", "session_id": "session-1", "path": "/a"}
    service.analytics.record_event("link click", href="https://x.example/y?q=1", **common)
    service.analytics.record_event("engagement ping", seconds=12.5, **common)
    events = client.simulate_get("/api/export/events", headers=auth).json["events"]
    assert [e["props"] for e in events] == [
        {"href": "https://x.example/y"},
        {"engaged_seconds": 12.5},
    ]
    assert [e["event_type"] for e in events] == ["link click", "engagement ping"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("after_id=-1", "after_id"),
        ("after_id=abc", "after_id"),
        ("after_id=1.5", "after_id"),
        ("after_id=", "after_id"),
        ("after_id=99999999999999999999999", "after_id"),
        ("after_id=1&after_id=2", "after_id"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("limit= ", "limit"),
        ("cursor=5", "cursor"),
    ],
)
def test_malformed_events_query_is_400_naming_the_parameter(
    client: Any, auth: dict[str, str], query: str, field: str
) -> None:
    result = client.simulate_get("/api/export/events", headers=auth, query_string=query)
    assert result.status_code == 400
    assert set(result.json) == {"error", "message"}
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]


def test_status_refuses_query_parameters(client: Any, auth: dict[str, str]) -> None:
    result = client.simulate_get("/api/export/status", headers=auth, query_string="x=1")
    assert result.status_code == 400
    assert "'x'" in result.json["message"]


# -- rollups: the query -----------------------------------------------------------------------


def _rollups(client: Any, auth: dict[str, str], query: str) -> Any:
    return client.simulate_get("/api/export/rollups", headers=auth, query_string=query)


def test_span_of_92_days_is_allowed_93_is_not(client: Any, auth: dict[str, str]) -> None:
    ok = _rollups(client, auth, "from=2026-01-01&to=2026-04-02")  # 31 + 28 + 31 + 2 = 92
    assert ok.status_code == 200
    days = [r["date"] for r in ok.json["rollups"]]
    assert len(days) == 92 and days[0] == "2026-01-01" and days[-1] == "2026-04-02"
    too_long = _rollups(client, auth, "from=2026-01-01&to=2026-04-03")
    assert too_long.status_code == 400
    assert too_long.json["error"] == "invalid_request"
    assert "92" in too_long.json["message"] and "to" in too_long.json["message"]


def test_span_counts_the_leap_day(client: Any, auth: dict[str, str]) -> None:
    # 2028 is a leap year: Jan 31 + Feb 29 + Mar 31 = 91 days, so Jan 1..Apr 1 is 92.
    ok = _rollups(client, auth, "from=2028-01-01&to=2028-04-01")
    assert ok.status_code == 200
    days = [r["date"] for r in ok.json["rollups"]]
    assert len(days) == 92 and "2028-02-29" in days
    assert _rollups(client, auth, "from=2028-01-01&to=2028-04-02").status_code == 400


def test_single_day_and_leap_day(client: Any, auth: dict[str, str]) -> None:
    result = _rollups(client, auth, "from=2024-02-29&to=2024-02-29")
    assert [r["date"] for r in result.json["rollups"]] == ["2024-02-29"]


def test_rollups_cross_the_year_end(client: Any, auth: dict[str, str]) -> None:
    result = _rollups(client, auth, "from=2025-12-30&to=2026-01-02")
    assert [r["date"] for r in result.json["rollups"]] == [
        "2025-12-30",
        "2025-12-31",
        "2026-01-01",
        "2026-01-02",
    ]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("from=2026-02-29&to=2026-03-01", "from"),  # not a leap year
        ("from=2026-02-01&to=2026-02-30", "to"),
        ("from=2026-04-31&to=2026-05-01", "from"),
        ("from=2026-13-01&to=2026-13-02", "from"),
        ("from=2026-00-10&to=2026-01-10", "from"),
        ("from=2026-01-00&to=2026-01-10", "from"),
        ("from=2100-02-29&to=2100-03-01", "from"),  # century, not a leap year
        ("from=2026-1-1&to=2026-01-02", "from"),
        ("from=20260101&to=2026-01-02", "from"),
        ("from=2026-01-01T00:00&to=2026-01-02", "from"),
        ("from=2026-01-01Z&to=2026-01-02", "from"),
        ("from=%EF%BC%92026-01-01&to=2026-01-02", "from"),
        ("from=2026-01-05&to=2026-01-04", "to"),
        ("to=2026-01-04", "from"),
        ("from=2026-01-04", "to"),
        ("", "from"),
        ("from=2026-01-01&from=2026-01-02&to=2026-01-03", "from"),
        ("from=2026-01-01&to=2026-01-02&source=x", "source"),
    ],
)
def test_malformed_rollups_query_is_400_naming_the_parameter(
    client: Any, auth: dict[str, str], query: str, field: str
) -> None:
    result = _rollups(client, auth, query)
    assert result.status_code == 400
    assert set(result.json) == {"error", "message"}
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]


def test_2000_is_a_leap_year(client: Any, auth: dict[str, str]) -> None:
    assert _rollups(client, auth, "from=2000-02-29&to=2000-02-29").status_code == 200


def test_extreme_dates_do_not_fail(client: Any, auth: dict[str, str]) -> None:
    assert _rollups(client, auth, "from=9999-12-31&to=9999-12-31").status_code == 200
    assert _rollups(client, auth, "from=0001-01-01&to=0001-01-02").status_code == 200


def test_unreachable_database_answers_503(newsletter_settings: Any) -> None:
    import falcon.testing

    from newsletter_connector import NewsletterService, create_app
    from newsletter_connector.plugins.sql_store import SqlStorage
    from newsletter_connector.plugins.sql_store.engine import make_engine

    settings = newsletter_settings.model_copy(
        update={"database_url": "postgresql://nobody@127.0.0.1:9/none"}
    )
    storage = SqlStorage(make_engine(settings.database_url, connect_args={"connect_timeout": 2}))
    client = falcon.testing.TestClient(
        create_app(service=NewsletterService.build(settings, storage=storage))
    )
    result = client.simulate_get("/api/export/events", headers={"Authorization": f"Bearer {TOKEN}"})
    assert result.status_code == 503
    assert result.json["error"] == "db_unavailable"
    assert result.headers["retry-after"] == "5"
    assert TOKEN not in result.text


def test_the_documented_events_page_has_the_answer_s_shape(
    client: Any, service: Any, auth: dict[str, str]
) -> None:
    """docs/export.md's example page: the same fields, of the same types, as a real page."""
    pageview(service, "/news/today", referrer="https://www.search.example/")
    service.analytics.record_event(
        "engagement ping",
        visitor_id="visitor-1",
        session_id="session-1",
        path="/news/today",
        seconds=28.0,
    )
    real = client.simulate_get("/api/export/events", headers=auth).json
    documented = json.loads(docblock("export-events-answer"))
    same_shape(documented, real)
    assert [e["event_type"] for e in documented["events"]] == [
        e["event_type"] for e in real["events"]
    ]
    assert documented["events"][1]["props"].keys() == real["events"][1]["props"].keys()
