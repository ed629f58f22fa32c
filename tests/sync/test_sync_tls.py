"""Delivery to a real local TLS receiver: trust, deadlines against a dripping server, resets."""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import httpcore
import httpx
import pytest

from newsletter_connector import hookimpl
from newsletter_connector.descriptors import OutboundTransport
from newsletter_connector.http_client.deadline import DeadlineBackend
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.events import queue_event
from newsletter_connector.sync.runner import SyncRunner
from tests.support import sync_payloads as p
from tests.support.docblocks import docblock
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import wait_until

pytestmark = pytest.mark.system

TOKEN = "platform-token-0123456789"


@pytest.fixture
def receiver(tmp_path: Any) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


def make_service(newsletter_settings: Any, newsletter_storage: Any, **settings: Any) -> Any:
    configured = newsletter_settings.model_copy(update=settings)
    return NewsletterService.build(configured, storage=newsletter_storage)


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver) -> Any:
    service = make_service(newsletter_settings, newsletter_storage, ca_bundle=str(receiver.ca_file))
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    return service


def request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "newsletter-sync-request"]


def queue(service: Any, count: int) -> list[str]:
    with service.storage.transaction() as uow:
        return [
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
            for n in range(count)
        ]


def test_delivers_over_tls_trusting_the_configured_ca_bundle(
    service: Any, receiver: TlsReceiver
) -> None:
    ids = queue(service, 3)
    report = SyncRunner(service, periodic_tasks=[]).run_once()
    assert report.delivered_events == 3
    assert receiver.event_ids() == ids
    request = receiver.received[0]
    assert request.path == "/v1/events"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_an_untrusted_certificate_is_a_failed_attempt(
    newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver, monkeypatch: Any
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    service = make_service(newsletter_settings, newsletter_storage)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    queue(service, 1)
    outcome = SyncRunner(service, periodic_tasks=[]).run_once().outcomes[0]
    assert outcome.result == "retry"
    assert "CERTIFICATE_VERIFY_FAILED" in (outcome.error or "")
    assert receiver.received == []  # nothing reached an unverified peer


def test_ssl_cert_file_is_trusted(
    newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(receiver.ca_file))
    service = make_service(newsletter_settings, newsletter_storage)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    queue(service, 1)
    assert SyncRunner(service, periodic_tasks=[]).run_once().delivered_events == 1


def test_500s_then_200_over_tls_with_the_same_ids(service: Any, receiver: TlsReceiver) -> None:
    ids = queue(service, 2)
    receiver.script = ["500", "500"]
    now = [service.context.clock()]
    runner = SyncRunner(service, periodic_tasks=[], clock=lambda: now[0])
    results = []
    for _ in range(3):
        results.append(runner.run_once().outcomes[0].result)
        now[0] += timedelta(days=1)
    assert results == ["retry", "retry", "delivered"]
    assert [[e["id"] for e in r.body] for r in receiver.received] == [ids, ids, ids]


def test_a_receiver_dripping_a_byte_a_second_fails_at_the_total_deadline(
    service: Any, receiver: TlsReceiver
) -> None:
    queue(service, 1)
    receiver.script = ["drip"]
    receiver.drip_interval = 1.0  # a byte a second: no per-phase timeout would ever fire
    earlier = set(request_threads())  # idle workers of other tests' runners
    started = time.monotonic()
    runner = SyncRunner(service, periodic_tasks=[], deadline=3.0)
    outcome = runner.run_once().outcomes[0]
    elapsed = time.monotonic() - started
    assert outcome.result == "retry"
    assert (outcome.error or "").startswith("timeout")
    assert 3.0 <= elapsed < 5.0
    # the request ended on the runner's own thread: no thread of its requests is left
    runner.close()
    assert wait_until(lambda: not set(request_threads()) - earlier, timeout=2.0)


def test_the_default_deadline_fails_a_dripping_receiver_at_15_seconds(
    service: Any, receiver: TlsReceiver
) -> None:
    queue(service, 1)
    receiver.script = ["drip"]
    receiver.drip_interval = 1.0
    runner = SyncRunner(service, periodic_tasks=[])  # docs/delivery.md: 15 seconds, total
    started = time.monotonic()
    try:
        outcome = runner.run_once().outcomes[0]
    finally:
        runner.close()
    elapsed = time.monotonic() - started
    assert outcome.result == "retry"
    assert (outcome.error or "").startswith("timeout")
    assert 15.0 <= elapsed < 17.5
    assert len(receiver.received) == 1


def test_a_receiver_that_never_answers_fails_at_the_deadline(
    service: Any, receiver: TlsReceiver
) -> None:
    queue(service, 1)
    receiver.script = ["hang"]
    started = time.monotonic()
    outcome = SyncRunner(service, periodic_tasks=[], deadline=0.5).run_once().outcomes[0]
    assert outcome.result == "retry"
    assert time.monotonic() - started < 2.5


def test_a_connection_reset_is_a_failed_attempt(service: Any, receiver: TlsReceiver) -> None:
    queue(service, 1)
    receiver.script = ["reset"]
    outcome = SyncRunner(service, periodic_tasks=[]).run_once().outcomes[0]
    assert outcome.result == "retry"
    assert len(receiver.received) == 1


def test_platform_transport_over_tls(service: Any, receiver: TlsReceiver) -> None:
    service.admin.set_connection(platform_base=receiver.base, transport="platform", token=TOKEN)
    with service.storage.transaction() as uow:
        queue_event(uow, service.context, "newsletter.signup", p.contact(status="pending"))
        queue_event(
            uow, service.context, "newsletter.unsubscribed", p.contact(status="unsubscribed")
        )
    assert SyncRunner(service, periodic_tasks=[]).run_once().delivered_events == 2
    assert [r.path for r in receiver.received] == [
        "/api/v1/sites/ingest/newsletter",
        "/api/v1/sites/ingest/unsubscribe",
    ]


def counting_thread_starts(monkeypatch: Any) -> list[threading.Thread]:
    """Every thread started from now on (for the rest of the test)."""
    started: list[threading.Thread] = []
    original = threading.Thread.start

    def counting_start(thread: threading.Thread) -> None:
        started.append(thread)
        original(thread)

    monkeypatch.setattr(threading.Thread, "start", counting_start)
    return started


def test_requests_run_on_the_runners_own_thread(
    service: Any, receiver: TlsReceiver, monkeypatch: Any
) -> None:
    # Handing each request to a worker thread cost more than the request itself; the
    # backend bounds every operation, so the request runs where it is made
    queue(service, 250)
    runner = SyncRunner(service, periodic_tasks=[])
    started = counting_thread_starts(monkeypatch)
    try:
        assert runner.run_once().delivered_events == 250
    finally:
        runner.close()
    assert len(receiver.received) == 3
    names = {thread.name for thread in started}
    assert "newsletter-sync-request" not in names
    assert "newsletter-sync-resolve" not in names  # an IP address needs no look-up


def connect_by_name(service: Any, receiver: TlsReceiver, host: str) -> None:
    """Point the connection at the receiver by ``host`` rather than its IP address."""
    base = receiver.base.replace("127.0.0.1", host)
    service.admin.set_connection(platform_base=base, transport="events", token=TOKEN)


def test_a_host_name_is_resolved_and_delivered_to(
    service: Any, receiver: TlsReceiver, monkeypatch: Any
) -> None:
    connect_by_name(service, receiver, "localhost")
    queue(service, 3)
    runner = SyncRunner(service, periodic_tasks=[])
    started = counting_thread_starts(monkeypatch)
    try:
        assert runner.run_once().delivered_events == 3
    finally:
        runner.close()
    assert [t.name for t in started].count("newsletter-sync-resolve") == 1


def test_a_resolver_that_never_answers_fails_at_the_deadline(
    service: Any, receiver: TlsReceiver, monkeypatch: Any
) -> None:
    connect_by_name(service, receiver, "platform.invalid")
    queue(service, 1)
    real_getaddrinfo = socket.getaddrinfo

    def stuck_resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "platform.invalid":
            time.sleep(3.0)  # getaddrinfo has no timeout of its own
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", stuck_resolver)
    started = time.monotonic()
    outcome = SyncRunner(service, periodic_tasks=[], deadline=0.5).run_once().outcomes[0]
    assert time.monotonic() - started < 2.0
    assert outcome.result == "retry"
    assert (outcome.error or "").startswith("timeout")
    assert receiver.received == []


def test_a_peer_reading_slowly_cannot_stretch_a_write_past_the_deadline() -> None:
    # every send of the loop gets only the time left: httpcore's own loop gave each send the
    # whole timeout again, so a peer taking a little at a time kept one write going for ever
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def read_slowly() -> None:
        peer, _ = listener.accept()
        with peer:
            peer.settimeout(0.2)
            give_up_at = time.monotonic() + 6.0
            while not stop.is_set() and time.monotonic() < give_up_at:
                try:
                    if not peer.recv(65536):
                        return
                except TimeoutError:
                    pass
                time.sleep(0.01)

    reader = threading.Thread(target=read_slowly, daemon=True)
    reader.start()
    backend = DeadlineBackend()
    backend.arm(1.0)
    stream = backend.connect_tcp("127.0.0.1", port)
    started = time.monotonic()
    try:
        with pytest.raises(httpcore.WriteTimeout):
            stream.write(b"x" * 200_000_000)  # far beyond what the socket buffers hold
        assert time.monotonic() - started < 2.0
    finally:
        stop.set()
        stream.close()
        reader.join(10)
        listener.close()
        backend.close()


def docs_webhook_transports() -> Any:
    """The hook implementation of docs/plugins.md's example transport."""
    namespace: dict[str, Any] = {"__name__": "docs_plugin_outbound_transport"}
    exec(compile(docblock("plugin-outbound-transport"), "<docs>", "exec"), namespace)
    return namespace["newsletter_outbound_transports"]


def test_the_documented_example_transport_delivers_and_fails_like_a_built_in(
    newsletter_settings: Any, newsletter_storage: Any, receiver: TlsReceiver
) -> None:
    (descriptor,) = docs_webhook_transports()()
    clients: list[Any] = []

    def recording_factory(connection: Any, http_client: Any) -> Any:
        clients.append(http_client)
        return descriptor.factory(connection, http_client)

    @hookimpl
    def newsletter_outbound_transports() -> list[OutboundTransport]:
        return [dataclasses.replace(descriptor, factory=recording_factory)]

    plugin = SimpleNamespace(newsletter_outbound_transports=newsletter_outbound_transports)
    configured = newsletter_settings.model_copy(update={"ca_bundle": str(receiver.ca_file)})
    service = NewsletterService.build(configured, storage=newsletter_storage, plugins=[plugin])
    service.admin.set_connection(platform_base=receiver.base, transport="webhook", token=TOKEN)
    ids = queue(service, 3)
    now = [service.context.clock()]
    runner = SyncRunner(service, periodic_tasks=[], deadline=2.0, clock=lambda: now[0])
    try:
        assert runner.run_once().delivered_events == 3
        request = receiver.received[0]
        assert request.path == "/hooks/newsletter"
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert [e["id"] for e in request.body] == ids
        # the runner's client: the same public object the built-ins are given
        assert type(clients[0]) is httpx.Client

        queue(service, 1)
        receiver.script = ["500"]
        failed = runner.run_once().outcomes[0]
        assert (failed.result, failed.error) == ("retry", "HTTP 500 from the webhook")

        now[0] += timedelta(days=1)
        receiver.script = ["drip"]
        receiver.drip_interval = 1.0
        started = time.monotonic()
        slow = runner.run_once().outcomes[0]
        assert slow.result == "retry"
        assert (slow.error or "").startswith("timeout")
        assert 2.0 <= time.monotonic() - started < 4.0

        # a built-in transport is built the same way, with the same kind of client
        service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
        builtin = runner.transport()
        assert type(builtin).__name__ == "EventsTransport"
        assert len(clients) == 1
        assert type(builtin.http) is type(clients[0])
    finally:
        runner.close()
