"""No span of a whole reader and operator scenario says an address, a link token, an API key,
the connection token, a password or anything else a reader typed: every span name, attribute,
event and status of signup, confirm, profile, unsubscribe, API reads, the export, the
list-source, an admin sign-in and search, and a sync push."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from newsletter_connector.sync.runner import SyncRunner
from tests.support.admin import PASSWORD, get_page, sign_in
from tests.support.pages_helpers import open_form, path_of
from tests.support.tracing import everything_said, recorded_spans, traced_storage
from tests.sync.test_sync_runner import TOKEN, Recorder, connect

EMAIL = "Scenario.Reader@Example.org"
LISTSOURCE_USER = "platform-user-7"
LISTSOURCE_KEY = "listsource-key-0123456789"
TYPED = {
    "first_name": "Philippa",
    "last_name": "Quennell",
    "zip": "90817",
    "phone": "+1 555 867 5309",
}


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from recorded_spans()


@pytest.fixture
def newsletter_settings(newsletter_settings: Any) -> Any:
    return newsletter_settings.model_copy(update={"tracing": "on"})


@pytest.fixture
def newsletter_storage(newsletter_settings: Any) -> Iterator[Any]:
    yield from traced_storage(newsletter_settings)


def test_no_span_of_a_whole_scenario_says_anything_secret_or_personal(
    newsletter_client: Any, newsletter_service: Any, api_key: str, spans: Any
) -> None:
    client, service = newsletter_client, newsletter_service
    connect(service)
    spans.clear()

    form = open_form(client, "/signup")
    signup = form.post(client, "/signup", {"email": EMAIL, "zip": "12345", "website": ""})
    assert signup.status_code == 303
    contact = dict(service.subscribers.contact(service.subscribers.get(EMAIL.lower())))
    links = {
        kind: path_of(contact[f"{kind}_url"]) for kind in ("confirm", "profile", "unsubscribe")
    }
    tokens = [path.rsplit("/", 1)[1] for path in links.values()]

    assert client.simulate_get(links["confirm"]).status_code == 200
    profile = open_form(client, links["profile"])
    fields = {**TYPED, "cadence_briefings": "weekly", "sms": "yes"}
    assert profile.post(client, links["profile"], fields).status_code in (200, 303)
    auth = {"Authorization": f"Bearer {api_key}"}
    assert client.simulate_get("/api/newsletter/v1/subscribers", headers=auth).status_code == 200
    one = f"/api/newsletter/v1/subscribers/{quote(EMAIL.lower())}"
    assert client.simulate_get(one, headers=auth).status_code == 200
    assert (
        client.simulate_get(one, headers={"Authorization": f"Bearer {api_key}x"}).status_code == 401
    )
    export = {"Authorization": f"Bearer {TOKEN}"}
    assert client.simulate_get("/api/export/status", headers=export).status_code == 200
    assert (
        client.simulate_get(f"/unsubscribe/{tokens[2]}", query_string=f"e={EMAIL}").status_code
        == 200
    )
    unsubscribe = open_form(client, links["unsubscribe"])
    assert unsubscribe.post(client, links["unsubscribe"], {}).status_code == 200
    client.simulate_get(f"/profile%2F{tokens[1]}")  # a spelling the router accepts too
    service.admin.set_listsource_credentials(LISTSOURCE_USER, LISTSOURCE_KEY)
    basic = base64.b64encode(f"{LISTSOURCE_USER}:{LISTSOURCE_KEY}".encode()).decode()
    lists = client.simulate_get(
        "/api/listsource/api/lists", headers={"Authorization": f"Basic {basic}"}
    )
    assert lists.status_code == 200
    service.admin_access.create_user("ada", PASSWORD)
    admin_session = sign_in(client)
    assert get_page(client, f"/admin/subscribers?q={EMAIL}", admin_session).status_code == 200
    client.simulate_get(f"/PROFILE/{tokens[1]}")

    recorder = Recorder()
    runner = SyncRunner(service, http_transport=lambda: httpx.MockTransport(recorder))
    assert runner.run_once().delivered_events >= 3  # signup, confirmed, profile, unsubscribed
    runner.close()
    pushed = b"".join(request.content for request in recorder.requests)
    assert EMAIL.lower().encode() in pushed and TYPED["phone"].encode() in pushed

    recorded = spans.get_finished_spans()
    kinds = {span.kind for span in recorded}
    assert {SpanKind.SERVER, SpanKind.CLIENT, SpanKind.INTERNAL} <= kinds
    assert len([s for s in recorded if s.kind is SpanKind.SERVER]) >= 12
    secrets = [
        EMAIL,
        EMAIL.lower(),
        quote(EMAIL.lower()),
        "example.org",
        *tokens,
        api_key,
        api_key.split("_", 1)[1],
        TOKEN,
        LISTSOURCE_KEY,
        basic,
        PASSWORD,
        admin_session,
        service.settings.site_secret.get_secret_value(),
        *TYPED.values(),
        "555 867",
    ]
    said = [(span.name, text) for span in recorded for text in everything_said(span)]
    for name, text in said:
        for secret in secrets:
            assert secret.lower() not in text.lower(), (name, text, secret)
        assert not re.search(r"[\w.+-]+(@|%40)[\w-]+\.\w+", text), (name, text)
        assert not re.search(r"nlk_[A-Za-z0-9]", text), (name, text)
    # what the spans do say: routes by template
    routes = {
        str((s.attributes or {}).get("http.route")) for s in recorded if s.kind is SpanKind.SERVER
    }
    assert {
        "/newsletter/signup",
        "/newsletter/confirm/{token}",
        "/newsletter/profile/{token}",
        "/newsletter/unsubscribe/{token}",
        "/newsletter/api/newsletter/v1/subscribers",
        "/newsletter/api/newsletter/v1/subscribers/{email:path}",
    } <= routes
