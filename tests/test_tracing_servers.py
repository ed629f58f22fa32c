"""Tracing through real servers: a gunicorn worker whose tracer provider is set up by the hook
docs/operations.md gives, exporting over OTLP/HTTP to a local collector, and a push over real
TLS to a local receiver (the SDK's in-memory exporter)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from newsletter_connector.service import NewsletterService
from newsletter_connector.service.events import queue_event
from newsletter_connector.sync.runner import SyncRunner

from .support import sync_payloads as p
from .support.docblocks import docblock
from .support.otlp_receiver import OtlpReceiver
from .support.servers import serving
from .support.tls_receiver import TlsReceiver
from .support.tracing import children, named, recorded_spans, traced_storage
from .support.waiting import free_port, wait_until

ROOT = Path(__file__).resolve().parents[1]
API = "/api/newsletter/v1"
EMAIL = "gunicorn.reader@example.org"
TOKEN = "platform-token-0123456789"

#: A host's gunicorn config: its settings, then the tracing hook of docs/operations.md.
CONFIG = """
bind = "127.0.0.1:{port}"
workers = 1
"""


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from recorded_spans()


@pytest.fixture
def newsletter_settings(newsletter_settings: Any) -> Any:
    return newsletter_settings.model_copy(update={"tracing": "on"})


@pytest.fixture
def newsletter_storage(newsletter_settings: Any) -> Iterator[Any]:
    yield from traced_storage(newsletter_settings)


def test_a_gunicorn_worker_exports_over_otlp_with_the_documented_hook(
    newsletter_service: Any, newsletter_settings: Any, tmp_path: Path
) -> None:
    api_key = newsletter_service.admin.create_api_key("tracing").key
    record = newsletter_service.subscribers.subscribe({"email": EMAIL}).record
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    config = tmp_path / "gunicorn.conf.py"
    config.write_text(CONFIG.format(port=port) + docblock("tracing-gunicorn"))
    collector = OtlpReceiver()
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": base + "/news",
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",  # served on loopback, as a local trial
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_TRACING": "on",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    command = [sys.executable, "-m", "gunicorn", "-c", str(config), "examples.standalone.wsgi:app"]
    bearer = {"Authorization": f"Bearer {api_key}"}
    try:
        with (
            serving(command, probe_url=base + API + "/openapi.json", env=env, cwd=ROOT),
            httpx.Client(base_url=base, timeout=10) as client,
        ):
            confirm = client.get(f"/confirm/{record.confirm_token}?again={record.confirm_token}")
            assert confirm.status_code == 200
            one = client.get(f"{API}/subscribers/{quote(EMAIL, safe='')}", headers=bearer)
            assert one.status_code == 200
            assert wait_until(
                lambda: len([s for s in collector.spans if s["kind"] == "server"]) >= 3
            )
    finally:
        collector.close()
    sent = b"".join(collector.bodies)
    for secret in (record.confirm_token, EMAIL, quote(EMAIL, safe=""), api_key):
        assert secret.encode() not in sent
    servers = {s["name"] for s in collector.spans if s["kind"] == "server"}
    assert {
        "GET /news/confirm/{token}",
        "GET /news/api/newsletter/v1/subscribers/{email:path}",
    } <= servers
    assert {s["service"] for s in collector.spans} == {"newsletter"}
    statements = [s for s in collector.spans if "db.system.name" in s["attributes"]]
    assert statements and {s["attributes"]["db.system.name"] for s in statements} == {
        newsletter_service.storage.dialect
    }


def test_a_push_over_tls_is_a_client_span_with_the_platforms_address(
    newsletter_service: Any, spans: Any, tmp_path: Path
) -> None:
    receiver = TlsReceiver(tmp_path)
    try:
        service = NewsletterService.build(
            newsletter_service.settings.model_copy(update={"ca_bundle": str(receiver.ca_file)}),
            storage=newsletter_service.storage,
        )
        service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
        with service.storage.transaction() as uow:
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": "1"})
        spans.clear()
        runner = SyncRunner(service, periodic_tasks=[])
        assert runner.run_once().delivered_events == 1
        runner.close()
    finally:
        receiver.close()
    [deliver] = named(spans, "newsletter.sync.deliver")
    [push] = [s for s in children(spans, deliver) if s.name == "POST"]
    url = httpx.URL(receiver.base)
    assert dict(push.attributes or {}) == {
        "http.request.method": "POST",
        "server.address": url.host,
        "server.port": url.port,
        "url.scheme": "https",
        "url.full": f"{receiver.base}/v1/events",
        "http.response.status_code": 200,
    }
