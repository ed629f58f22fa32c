"""Tracing through real servers: a gunicorn worker whose tracer provider is set up by the hook
docs/operations.md gives, exporting over OTLP/HTTP to a local collector, and a push over real
TLS to a local receiver (the SDK's in-memory exporter)."""

from __future__ import annotations

import os
import subprocess
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
from tests.support import sync_payloads as p
from tests.support.docblocks import docblock
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.paths import ROOT
from tests.support.servers import serving
from tests.support.tls_receiver import TlsReceiver
from tests.support.tracing import children, named, recorded_spans, traced_storage
from tests.support.waiting import free_port, wait_until

pytestmark = pytest.mark.system

API = "/api/newsletter/v1"
EMAIL = "gunicorn.reader@example.org"
TOKEN = "platform-token-0123456789"
BIN = Path(sys.executable).parent

#: A host's gunicorn config: its settings, then the tracing hook of docs/operations.md.
CONFIG = """
bind = "127.0.0.1:{port}"
workers = 1
"""


def instrumented_environment(collector: OtlpReceiver, **variables: str) -> dict[str, str]:
    """The environment docs/operations.md gives ``opentelemetry-instrument``, exporting to
    ``collector``, with tracing on and ``variables``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEWSLETTER_", "OTEL_"))}
    env.update(
        PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]),
        NEWSLETTER_TRACING="on",
        OTEL_SERVICE_NAME="newsletter",
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=collector.endpoint,
        OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="falcon,sqlalchemy,httpx,wsgi",
        OTEL_METRICS_EXPORTER="none",
        OTEL_LOGS_EXPORTER="none",
        OTEL_BSP_SCHEDULE_DELAY="100",
        **variables,
    )
    return env


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


def test_sync_under_opentelemetry_instrument_exports_its_loop_as_the_docs_say(
    newsletter_service: Any, newsletter_settings: Any, tmp_path: Path
) -> None:
    receiver = TlsReceiver(tmp_path)
    collector = OtlpReceiver()
    try:
        newsletter_service.admin.set_connection(
            platform_base=receiver.base, transport="events", token=TOKEN
        )
        with newsletter_service.storage.transaction() as uow:
            queue_event(
                uow, newsletter_service.context, "contact.message", {**p.message(), "id": "7"}
            )
        env = instrumented_environment(
            collector,
            NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
            NEWSLETTER_BASE_URL=newsletter_settings.base_url,
            NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
            SSL_CERT_FILE=str(receiver.ca_file),
        )
        done = subprocess.run(
            [str(BIN / "opentelemetry-instrument"), "newsletter-connector", "sync", "--once"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert len(receiver.received) == 1
        assert wait_until(lambda: any(s["name"] == "POST" for s in collector.spans))
    finally:
        collector.close()
        receiver.close()
    names = {s["name"] for s in collector.spans}
    assert {
        "newsletter.sync.run",
        "newsletter.sync.claim",
        "newsletter.sync.deliver",
        "POST",
    } <= names
    assert {s["service"] for s in collector.spans} == {"newsletter"}
    assert TOKEN.encode() not in b"".join(collector.bodies)


def test_serve_under_opentelemetry_instrument_exports_from_its_workers(
    newsletter_settings: Any, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    collector = OtlpReceiver()
    env = instrumented_environment(
        collector,
        NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
        NEWSLETTER_BASE_URL=base,
        NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS="true",  # served on loopback, as a local trial
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
    )
    command = [
        str(BIN / "opentelemetry-instrument"),
        "newsletter-connector",
        "serve",
        "--workers",
        "2",
        "--bind",
        f"127.0.0.1:{port}",
    ]
    try:
        with serving(command, probe_url=base + "/signup", env=env, cwd=tmp_path):
            for _ in range(4):
                assert httpx.get(base + "/signup", timeout=10).status_code == 200
            assert wait_until(
                lambda: len([s for s in collector.spans if s["name"] == "GET /signup"]) >= 4
            )
    finally:
        collector.close()
    assert {s["service"] for s in collector.spans} == {"newsletter"}
