"""OpenTelemetry spans of requests and database statements, recorded with the SDK's in-memory
exporter through the app (``create_app`` with ``tracing = on``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from sqlalchemy import exc as sa_exc

from newsletter_connector.tracing.statements import sanitised_sql, statement_span
from newsletter_connector.web.admin.gate import COOKIE_NAME
from newsletter_connector.web.app import create_app
from tests.support.admin import PASSWORD, csrf_token, get_page, post_form, sign_in
from tests.support.pages_helpers import open_form, path_of
from tests.support.tracing import (
    children,
    everything_said,
    recorded_spans,
    statement_spans,
    traced_storage,
)

SERVER = {"server.address": "news.example.test", "server.port": 443}


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from recorded_spans()


@pytest.fixture
def newsletter_settings(newsletter_settings: Any) -> Any:
    return newsletter_settings.model_copy(update={"tracing": "on"})


@pytest.fixture
def newsletter_storage(newsletter_settings: Any) -> Iterator[Any]:
    yield from traced_storage(newsletter_settings)


@pytest.fixture
def pending(newsletter_service: Any) -> dict[str, Any]:
    record = newsletter_service.subscribers.subscribe({"email": "traced@example.org"}).record
    return dict(newsletter_service.subscribers.contact(record))


def test_an_api_request_is_a_server_span_named_by_its_route_template(
    newsletter_client: Any, auth: dict[str, str], pending: dict[str, Any], spans: Any
) -> None:
    spans.clear()
    result = newsletter_client.simulate_get(
        "/api/newsletter/v1/subscribers/traced@example.org", headers=auth
    )
    assert result.status_code == 200
    [server] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    route = "/newsletter/api/newsletter/v1/subscribers/{email:path}"
    assert server.name == f"GET {route}"
    assert dict(server.attributes or {}) == {
        "http.request.method": "GET",
        "http.route": route,
        "http.response.status_code": 200,
        "url.scheme": "http",
        "network.protocol.version": "1.1",
        **SERVER,
    }
    assert server.status.status_code is StatusCode.UNSET
    assert server.parent is None
    # the key check (a driver-level statement) and the read are children of the request
    statements = children(spans, server)
    assert statements and all(s.kind is SpanKind.CLIENT for s in statements)
    texts = [str((s.attributes or {})["db.query.text"]) for s in statements]
    assert any("api_keys" in t and t.startswith("SELECT") for t in texts), texts
    assert any("subscribers" in t and t.startswith("SELECT") for t in texts), texts
    assert not any(
        "traced@example.org" in text
        for s in spans.get_finished_spans()
        for text in everything_said(s)
    )


def test_a_reader_link_is_named_by_its_template_and_its_token_is_nowhere(
    newsletter_client: Any, pending: dict[str, Any], spans: Any
) -> None:
    path = path_of(pending["confirm_url"])
    token = path.rsplit("/", 1)[1]
    spans.clear()
    assert newsletter_client.simulate_get(path, query_string="utm=x&t=" + token).status_code == 200
    [server] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert server.name == "GET /newsletter/confirm/{token}"
    assert (server.attributes or {})["http.route"] == "/newsletter/confirm/{token}"
    assert len(children(spans, server)) >= 2  # the look-up and the confirmation
    for span in spans.get_finished_spans():
        for text in everything_said(span):
            assert token not in text and "traced@example.org" not in text, (span.name, text)


def test_an_unknown_path_with_an_address_is_named_by_its_method_only(
    newsletter_client: Any, spans: Any
) -> None:
    result = newsletter_client.simulate_get(
        "/nowhere/someone%40example.org/x", headers={"traceparent": "junk"}
    )
    assert result.status_code == 404
    [server] = spans.get_finished_spans()
    assert server.name == "GET"
    attributes = dict(server.attributes or {})
    assert "http.route" not in attributes
    assert attributes["http.response.status_code"] == 404
    assert server.status.status_code is StatusCode.UNSET  # a 4xx is the client's error
    assert not any("example.org" in text for text in everything_said(server))


@pytest.mark.filterwarnings("ignore:Unknown REQUEST_METHOD")
def test_a_method_outside_the_conventions_is_other(newsletter_client: Any, spans: Any) -> None:
    newsletter_client.simulate_request("BREW", "/signup")
    [server] = spans.get_finished_spans()
    assert server.name == "HTTP"
    assert (server.attributes or {})["http.request.method"] == "_OTHER"


def test_a_caller_trace_context_is_continued(newsletter_client: Any, spans: Any) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = "00f067aa0ba902b7"
    newsletter_client.simulate_get("/signup", headers={"traceparent": f"00-{trace_id}-{parent}-01"})
    [server] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert server.context is not None and server.parent is not None
    assert format(server.context.trace_id, "032x") == trace_id
    assert format(server.parent.span_id, "016x") == parent


def test_a_server_error_marks_the_span_with_its_status_and_no_message(
    newsletter_client: Any, newsletter_app: Any, auth: dict[str, str], spans: Any
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("secret-ish detail someone@example.org")

    newsletter_app.service.subscribers.list_page = broken
    result = newsletter_client.simulate_get("/api/newsletter/v1/subscribers", headers=auth)
    assert result.status_code == 500
    [server] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert (server.attributes or {})["error.type"] == "500"
    assert server.status.status_code is StatusCode.ERROR
    assert server.events == ()
    assert not any("someone@example.org" in text for text in everything_said(server))


def test_every_statement_is_a_client_span_with_the_database_conventions(
    newsletter_service: Any, pending: dict[str, Any], spans: Any
) -> None:
    spans.clear()
    newsletter_service.subscribers.get("traced@example.org")
    statements = statement_spans(spans)
    assert statements
    storage = newsletter_service.storage
    for span in statements:
        attributes = dict(span.attributes or {})
        assert attributes["db.system.name"] == storage.dialect
        assert span.kind is SpanKind.CLIENT
        if storage.dialect == "postgresql":
            assert attributes["db.namespace"] == storage.engine.url.database
            assert attributes["server.address"] == storage.engine.url.host
            assert attributes["server.port"] == (storage.engine.url.port or 5432)
        assert "traced@example.org" not in str(attributes["db.query.text"])
    select = [s for s in statements if (s.attributes or {}).get("db.operation.name") == "SELECT"]
    assert select and select[0].name == "SELECT"


def test_a_failing_statement_marks_its_span_without_the_drivers_message(
    newsletter_service: Any, spans: Any
) -> None:
    engine = newsletter_service.storage.engine
    with pytest.raises(sa_exc.DBAPIError), engine.connect() as connection:
        connection.exec_driver_sql("SELECT 'someone@example.org' FROM no_such_table")
    [failed] = [s for s in statement_spans(spans) if s.status.status_code is StatusCode.ERROR]
    attributes = dict(failed.attributes or {})
    assert attributes["db.query.text"] == "SELECT ? FROM no_such_table"
    # SQLite's, PostgreSQL's, and MySQL's and MariaDB's (error 1146) names for it.
    assert str(attributes["error.type"]).endswith(
        ("OperationalError", "UndefinedTable", "ProgrammingError")
    )
    if engine.dialect.name == "postgresql":
        assert attributes["db.response.status_code"] == "42P01"
    assert failed.events == () and not failed.status.description


def test_a_driver_level_statement_span_fails_the_same_way(
    newsletter_service: Any, spans: Any
) -> None:
    engine = newsletter_service.storage.engine
    with pytest.raises(ValueError), statement_span(engine, "DELETE FROM subscribers WHERE id = 7"):
        raise ValueError("no")
    [span] = statement_spans(spans)
    assert span.name == "DELETE"
    assert (span.attributes or {})["db.query.text"] == "DELETE FROM subscribers WHERE id = ?"
    assert (span.attributes or {})["error.type"] == "ValueError"


@pytest.mark.parametrize(
    ("statement", "sanitised"),
    [
        (
            "SELECT * FROM t WHERE a = 'x@y.org' AND b = 'it''s'",
            "SELECT * FROM t WHERE a = ? AND b = ?",
        ),
        (
            "SELECT e0_seq, $1, :name, %(id_1)s FROM t LIMIT 10 OFFSET 0",
            "SELECT e0_seq, $1, :name, %(id_1)s FROM t LIMIT ? OFFSET ?",
        ),
        ("SET LOCAL statement_timeout = 1500", "SET LOCAL statement_timeout = ?"),
        ("SELECT 1.5e3, -2, t.c2 FROM t", "SELECT ?, ?, t.c2 FROM t"),
    ],
)
def test_literals_are_replaced_in_the_query_text(statement: str, sanitised: str) -> None:
    assert sanitised_sql(statement) == sanitised


def test_with_tracing_off_nothing_is_recorded(
    newsletter_settings: Any, newsletter_service: Any, pending: dict[str, Any], spans: Any
) -> None:
    from newsletter_connector.service import NewsletterService

    off = newsletter_settings.model_copy(update={"tracing": "off"})
    untraced = traced_storage(off)
    storage = next(untraced)
    try:
        client = falcon.testing.TestClient(
            create_app(service=NewsletterService.build(off, storage=storage))
        )
        spans.clear()
        assert client.simulate_get(path_of(pending["confirm_url"])).status_code == 200
        assert spans.get_finished_spans() == ()
    finally:
        untraced.close()


def test_a_signup_through_the_form_traces_its_driver_level_insert(
    newsletter_client: Any, spans: Any
) -> None:
    form = open_form(newsletter_client, "/signup")
    spans.clear()
    result = form.post(newsletter_client, "/signup", {"email": "form@example.org", "zip": "12345"})
    assert result.status_code == 303
    [server] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert server.name == "POST /newsletter/signup"
    inserts = [
        str((s.attributes or {})["db.query.text"])
        for s in children(spans, server)
        if "INSERT INTO nc_subscribers" in str((s.attributes or {}).get("db.query.text"))
    ]
    assert len(inserts) == 1, [s.name for s in children(spans, server)]
    assert "form@example.org" not in inserts[0]


def test_a_streamed_body_keeps_its_statements_in_the_request_span(
    newsletter_service: Any, spans: Any
) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "csv@example.org"}).record
    newsletter_service.subscribers.confirm_by_token(record.confirm_token)
    newsletter_service.admin_access.create_user("ada", PASSWORD)
    client = falcon.testing.TestClient(create_app(service=newsletter_service))
    session = sign_in(client)
    token = csrf_token(get_page(client, "/admin/subscribers", session))
    spans.clear()
    result = post_form(
        client, "/admin/subscribers/export", {"csrf_token": token}, cookies={COOKIE_NAME: session}
    )
    assert result.status_code == 200 and "csv@example.org" in result.text
    [server] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER]
    assert server.name == "POST /newsletter/admin/subscribers/export"
    walked = [
        s
        for s in children(spans, server)
        if "FROM nc_subscribers" in str((s.attributes or {}).get("db.query.text"))
    ]
    assert walked, [s.name for s in children(spans, server)]
    assert server.end_time is not None
    assert all(s.end_time is not None and s.end_time <= server.end_time for s in walked)
    assert statement_spans(spans) == [s for s in statement_spans(spans) if s.parent is not None]
