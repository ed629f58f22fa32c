"""The sync runner through httpx.MockTransport: ladder, leases, connection rules, erasure."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from newsletter_connector import http_client
from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.observability.exposition import render
from newsletter_connector.observability.outbox_collector import OutboxCollector
from newsletter_connector.plugins.sql_store.tables import outbox_batches
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.events import queue_event, subscriber_key
from newsletter_connector.sync.background import start_background_sync
from newsletter_connector.sync.runner import SyncRunner
from newsletter_connector.sync.schedule import MAX_ATTEMPTS, retry_delay
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support import sync_payloads as p

TOKEN = "platform-token-0123456789"
PLATFORM = "https://platform.example.test"


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 20, 12, 0, 0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


class Recorder:
    """A MockTransport handler answering from a script (status codes or callables)."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.script: list[Any] = []
        self.default: Any = 200
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        with self.lock:
            self.requests.append(request)
            action = self.script.pop(0) if self.script else self.default
        if callable(action):
            action = action(request)
        if isinstance(action, BaseException):
            raise action
        if isinstance(action, httpx.Response):
            return action
        return httpx.Response(int(action), json={"ok": True})

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests]

    def event_ids(self) -> list[list[str]]:
        return [[e["id"] for e in body] for body in self.bodies()]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, clock: FakeClock) -> Iterator[Any]:
    yield NewsletterService.build(newsletter_settings, storage=newsletter_storage, clock=clock)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_runner(service: Any, recorder: Recorder) -> Callable[..., SyncRunner]:
    def make(**options: Any) -> SyncRunner:
        options.setdefault("periodic_tasks", [])
        options.setdefault("http_transport", lambda: httpx.MockTransport(recorder))
        return SyncRunner(service, **options)

    return make


def connect(service: Any, transport: str = "events") -> None:
    service.admin.set_connection(platform_base=PLATFORM, transport=transport, token=TOKEN)


def queue(service: Any, count: int, *, email: str | None = None) -> list[str]:
    ids = []
    for n in range(count):
        with service.storage.transaction() as uow:
            payload = p.contact(email or f"r{n}@example.org")
            ids.append(
                queue_event(
                    uow,
                    service.context,
                    "newsletter.confirmed",
                    payload,
                    subscriber_email=payload["email"],
                )
            )
    return ids


def status(service: Any) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.outbox.status()


def test_nothing_leaves_without_a_connection(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    queue(service, 3)
    report = make_runner().run_once()
    assert not report.connected
    assert recorder.requests == []
    assert status(service).unbatched == 3


def test_activation_sends_the_backlog_oldest_first_in_batches_of_100(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    with service.storage.transaction() as uow:  # one transaction keeps the test quick
        ids = [
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
            for n in range(250)
        ]
    runner = make_runner()
    assert not runner.run_once().connected
    connect(service)
    report = runner.run_once()
    assert [len(batch) for batch in recorder.event_ids()] == [100, 100, 50]
    assert [i for batch in recorder.event_ids() for i in batch] == ids
    assert report.delivered_events == 250
    request = recorder.requests[0]
    assert str(request.url) == f"{PLATFORM}/v1/events"
    assert request.method == "POST"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    figures = status(service)
    assert figures.batches["delivered"] == 3
    assert figures.undelivered_events == 0


@pytest.mark.parametrize("transport", ["events", "platform"])
def test_requests_send_the_clients_headers_and_never_a_cookie_the_platform_set(
    service: Any, make_runner: Any, recorder: Recorder, transport: str
) -> None:
    connect(service, transport)
    recorder.script = [
        lambda r: httpx.Response(200, headers={"Set-Cookie": "session=abc; Path=/"}, json={})
    ]
    queue(service, 1)
    runner = make_runner()
    assert runner.run_once().delivered_events == 1
    queue(service, 1)
    assert runner.run_once().delivered_events == 1
    first, second = recorder.requests
    assert "cookie" not in second.headers  # a push carries its body and headers, nothing kept
    for request in (first, second):
        assert request.headers["user-agent"].startswith("python-httpx/")
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert request.headers["content-type"] == "application/json"


def test_500s_then_200_resend_the_same_ids_on_the_ladder(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    connect(service)
    ids = queue(service, 3)
    recorder.script = [500, 500]
    runner = make_runner()
    first = runner.run_once().outcomes
    assert [(o.result, o.error) for o in first] == [("retry", "HTTP 500 from POST /v1/events")]
    assert first[0].next_attempt_at == clock.now + timedelta(minutes=1)
    assert status(service).last_error == "HTTP 500 from POST /v1/events"
    clock.advance(timedelta(seconds=59))
    assert runner.run_once().outcomes == []  # not due yet
    clock.advance(timedelta(seconds=1))
    second = runner.run_once().outcomes
    assert second[0].next_attempt_at == clock.now + timedelta(minutes=10)
    clock.advance(timedelta(minutes=10))
    third = runner.run_once().outcomes
    assert [o.result for o in third] == ["delivered"]
    assert recorder.event_ids() == [ids, ids, ids]
    assert status(service).last_error is None


def test_the_full_ladder_ends_in_failed_after_20_attempts_then_replay(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    connect(service)
    ids = queue(service, 2)
    recorder.default = 503
    runner = make_runner()
    waits = []
    outcome = None
    for attempt in range(1, MAX_ATTEMPTS + 1):
        outcomes = runner.run_once().outcomes
        assert len(outcomes) == 1
        outcome = outcomes[0]
        assert outcome.attempts == attempt
        if outcome.result == "retry":
            waits.append(outcome.next_attempt_at - clock.now)
            clock.advance(outcome.next_attempt_at - clock.now)
    assert outcome is not None and outcome.result == "failed"
    minute, hour = timedelta(minutes=1), timedelta(hours=1)
    assert waits == [minute, 10 * minute, hour, 6 * hour] + [24 * hour] * 15
    assert [retry_delay(n) for n in range(1, 6)] == waits[:5]
    assert len(recorder.requests) == 20
    assert all(batch == ids for batch in recorder.event_ids())
    clock.advance(timedelta(days=30))
    assert runner.run_once().outcomes == []  # failed batches stay put
    figures = status(service)
    assert figures.batches["failed"] == 1
    assert figures.failed_events == 2
    assert figures.last_error == "HTTP 503 from POST /v1/events"
    with service.storage.transaction() as uow:
        assert uow.outbox.replay_failed(None, at=clock.now) == 1
    recorder.default = 200
    assert [o.result for o in runner.run_once().outcomes] == ["delivered"]
    assert recorder.event_ids()[-1] == ids


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("connection refused"),
        httpx.RemoteProtocolError("peer closed connection"),
        httpx.ReadError("connection reset by peer"),
    ],
    ids=["refused", "closed", "reset"],
)
def test_network_failures_are_retried(
    service: Any, make_runner: Any, recorder: Recorder, failure: Exception
) -> None:
    connect(service)
    queue(service, 1)
    recorder.script = [failure]
    outcome = make_runner().run_once().outcomes[0]
    assert outcome.result == "retry"
    assert type(failure).__name__ in (outcome.error or "")


def test_a_redirect_is_a_failure_and_is_not_followed(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    connect(service)
    queue(service, 1)
    recorder.script = [lambda r: httpx.Response(307, headers={"Location": "https://evil.test/"})]
    outcome = make_runner().run_once().outcomes[0]
    assert outcome.result == "retry"
    assert len(recorder.requests) == 1


def test_a_slow_answer_fails_at_the_total_deadline(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    connect(service)
    queue(service, 1)
    recorder.script = [lambda r: (time.sleep(2.0), 200)[1]]
    started = time.monotonic()
    outcome = make_runner(deadline=0.3).run_once().outcomes[0]
    assert time.monotonic() - started < 1.5
    assert outcome.result == "retry"
    assert (outcome.error or "").startswith("timeout")


def test_the_default_deadline_is_15_seconds(service: Any) -> None:
    # enforced against a real receiver: tests/sync/test_sync_tls.py
    assert SyncRunner(service, periodic_tasks=[]).deadline == 15.0
    assert http_client.REQUEST_DEADLINE_SECONDS == 15.0


def test_the_lease_outlives_every_request_deadline(service: Any, make_runner: Any) -> None:
    connect(service, "platform")
    runner = make_runner(deadline=15.0)
    transport = runner.transport()
    assert runner.lease_for(transport) > timedelta(seconds=15 * transport.max_requests_per_batch)


def test_erasure_discards_queued_events(service: Any, make_runner: Any, recorder: Recorder) -> None:
    kept = queue(service, 1, email="kept@example.org")
    queue(service, 2, email="erased@example.org")
    with service.storage.transaction() as uow:
        key = subscriber_key(service.context, "Erased@Example.org")
        assert uow.outbox.discard_for_subscriber(key) == 2
    connect(service)
    make_runner().run_once()
    assert recorder.event_ids() == [kept]
    assert "erased@example.org" not in recorder.requests[0].content.decode()


def test_a_batch_emptied_by_erasure_settles_without_a_request(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    connect(service)
    queue(service, 1, email="erased@example.org")
    recorder.script = [500]
    runner = make_runner()
    assert runner.run_once().outcomes[0].result == "retry"
    with service.storage.transaction() as uow:
        uow.outbox.discard_for_subscriber(subscriber_key(service.context, "erased@example.org"))
    clock.advance(timedelta(minutes=1))
    outcomes = runner.run_once().outcomes
    assert [(o.result, o.events) for o in outcomes] == [("delivered", 0)]
    assert len(recorder.requests) == 1


def test_http_happens_outside_any_transaction(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    connect(service)
    queue(service, 1)

    def write_while_sending(request: httpx.Request) -> int:
        with service.storage.transaction() as uow:  # would block if the runner held a lock
            uow.settings.put("written-during-push", True, at=datetime(2026, 1, 1))
        return 200

    recorder.script = [write_while_sending]
    assert make_runner().run_once().outcomes[0].result == "delivered"


def test_plain_http_connection_is_not_used_without_the_dev_setting(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    with service.storage.transaction() as uow:  # as if stored before the setting was turned off
        uow.connections.replace(
            platform_base="http://platform.example.test",
            transport="events",
            token=TOKEN,
            at=datetime(2026, 1, 1),
        )
    queue(service, 1)
    report = make_runner().run_once()
    assert not report.connected
    assert recorder.requests == []


def test_periodic_tasks_run_every_loop_and_a_failing_one_does_not_stop_delivery(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    calls: list[datetime] = []

    def broken(now: datetime) -> None:
        raise RuntimeError("boom")

    def queue_something(now: datetime) -> None:
        calls.append(now)
        with service.storage.transaction() as uow:
            queue_event(uow, service.context, "analytics.daily_rollup", p.rollup())

    connect(service)
    runner = make_runner(periodic_tasks=[broken, queue_something])
    report = runner.run_once()
    assert report.task_errors == 1
    assert calls == [clock.now]
    assert report.delivered_events == 1  # what the task queued went out in the same loop
    assert recorder.bodies()[0][0]["type"] == "analytics.daily_rollup"
    assert recorder.bodies()[0][0]["payload"] == p.rollup()


class ContentForDigests:
    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        return sample_issue_content()


def test_default_periodic_tasks_queue_rollups_and_run_digests(service: Any) -> None:
    from newsletter_connector.sync.periodic import default_periodic_tasks

    rollup_tasks = ["beat", "queue_completed_day_rollups", "keep_settled_rollups", "work"]
    # no content plugin: scheduled digests are off
    assert [t.__name__ for t in default_periodic_tasks(service)] == rollup_tasks
    service = NewsletterService.build(
        service.settings, storage=service.storage, plugins=[ContentForDigests()]
    )
    tasks = default_periodic_tasks(service)
    assert [t.__name__ for t in tasks] == [*rollup_tasks, "run_scheduled_digests"]
    assert tasks[0].__self__ is service.runner_status  # type: ignore[attr-defined]
    assert tasks[1].__self__ is service.analytics  # type: ignore[attr-defined]
    assert tasks[2].__self__ is service.analytics  # type: ignore[attr-defined]
    assert tasks[3].__self__ is service.jobs  # type: ignore[attr-defined]
    assert set(service.jobs.kinds) == {"bulk", "import"}
    assert tasks[4].__self__ is service.issues  # type: ignore[attr-defined]


def test_two_runners_never_send_the_same_batch_at_once(service: Any, recorder: Recorder) -> None:
    connect(service)
    with service.storage.transaction() as uow:
        for n in range(60):
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
    in_flight: set[str] = set()
    overlaps: list[str] = []
    lock = threading.Lock()

    def handler(request: httpx.Request) -> int:
        key = json.loads(request.content)[0]["id"]
        with lock:
            if key in in_flight:
                overlaps.append(key)
            in_flight.add(key)
        time.sleep(0.05)
        with lock:
            in_flight.discard(key)
        return 200

    recorder.default = handler

    def make() -> SyncRunner:
        runner = SyncRunner(
            service, periodic_tasks=[], http_transport=lambda: httpx.MockTransport(recorder)
        )
        transport = runner.transport()
        transport.max_batch_size = 5  # type: ignore[misc]
        return runner

    runners = [make(), make(), make()]
    threads = [threading.Thread(target=r.run_once) for r in runners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    ids = [i for batch in recorder.event_ids() for i in batch]
    assert overlaps == []
    assert len(ids) == len(set(ids)) == 60
    assert len(recorder.requests) == 12


def test_background_sync_delivers_and_stops(service: Any, recorder: Recorder) -> None:
    connect(service)
    ids = queue(service, 2)
    sync = start_background_sync(
        service,
        poll_interval=0.05,
        periodic_tasks=[],
        http_transport=lambda: httpx.MockTransport(recorder),
    )
    try:
        deadline = time.monotonic() + 10
        while not recorder.requests and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        assert sync.stop(timeout=10)
    assert recorder.event_ids() == [ids]
    assert not sync.running


def test_metrics_carry_the_status_figures(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    queue(service, 2)
    clock.advance(timedelta(seconds=90))
    text = render(OutboxCollector(service)).decode()
    assert "newsletter_outbox_status_up 1.0" in text
    assert 'newsletter_outbox_batches{state="failed"} 0.0' in text
    assert "newsletter_outbox_unbatched_events 2.0" in text
    assert "newsletter_outbox_undelivered_events 2.0" in text
    age = next(line for line in text.splitlines() if line.startswith("newsletter_outbox_oldest"))
    assert float(age.split()[1]) == pytest.approx(90, abs=1)
    assert "newsletter_outbox_has_error 0.0" in text


def test_delivered_batches_are_pruned_after_seven_days(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    connect(service)
    queue(service, 1)
    runner = make_runner()
    assert runner.run_once().delivered_events == 1
    clock.advance(timedelta(days=7))
    assert runner.run_once().pruned_batches == 0
    clock.advance(timedelta(seconds=1))
    assert runner.run_once().pruned_batches == 1
    assert status(service).batches["delivered"] == 0


def test_the_token_never_reaches_logs_or_stored_errors(
    service: Any, make_runner: Any, recorder: Recorder, caplog: Any
) -> None:
    connect(service)
    queue(service, 1)
    recorder.script = [httpx.ConnectError("refused"), 500]
    runner = make_runner()
    with caplog.at_level("DEBUG"):
        runner.run_once()
        assert TOKEN not in repr(runner) + repr(runner.transport())
    assert TOKEN not in caplog.text
    assert TOKEN not in (status(service).last_error or "")


def test_one_claim_carries_several_batches_settled_together(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    connect(service)
    ids = queue(service, 250)
    report = make_runner(claim_ahead=2).run_once()
    assert [(o.result, o.events) for o in report.outcomes] == [
        ("delivered", 100),
        ("delivered", 100),
        ("delivered", 50),
    ]
    assert [i for batch in recorder.event_ids() for i in batch] == ids
    figures = status(service)
    assert figures.batches["delivered"] == 3
    assert figures.batches["sending"] == 0


def test_the_lease_covers_every_batch_of_a_claim(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    connect(service)
    queue(service, 250)
    leases: list[list[datetime]] = []

    def read_leases(request: httpx.Request) -> int:
        with service.storage.transaction(write=False) as uow:
            b = outbox_batches.c
            query = select(b.lease_until).where(b.state == "sending").order_by(b.first_seq)
            leases.append(list(uow.connection.scalars(query)))
        return 200

    recorder.default = read_leases
    runner = make_runner(deadline=15.0, claim_ahead=4)
    assert runner.run_once().delivered_events == 250
    # the three batches were claimed together (and are settled together after the last), so
    # the last waits behind the other two: the lease covers a full deadline for every batch
    # the claim could hold
    assert [len(found) for found in leases] == [3, 3, 3]
    assert leases[0] == [clock.now + timedelta(seconds=4 * 15) + runner.lease_margin] * 3


def test_stop_mid_claim_settles_the_sent_batch_and_releases_the_rest(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    connect(service)
    ids = queue(service, 250)
    stop = threading.Event()

    def stop_while_sending(request: httpx.Request) -> int:
        stop.set()  # a stop request arrives while the first batch is in flight
        return 200

    recorder.script = [stop_while_sending]
    runner = make_runner()
    report = runner.run_once(stop=stop)
    assert [(o.result, o.events) for o in report.outcomes] == [("delivered", 100)]
    figures = status(service)
    assert (figures.batches["delivered"], figures.batches["pending"]) == (1, 2)
    assert figures.batches["sending"] == 0  # nothing left leased
    with service.storage.transaction(write=False) as uow:
        pending = [uow.outbox.get_batch(o) for o in _pending_ids(uow)]
    assert [r.attempts for r in pending if r] == [0, 0]  # released, not counted as attempts
    again = runner.run_once()
    assert [o.result for o in again.outcomes] == ["delivered", "delivered"]
    assert [i for batch in recorder.event_ids() for i in batch] == ids  # oldest first, once


def _pending_ids(uow: Any) -> list[str]:
    b = outbox_batches.c
    query = select(b.id).where(b.state == "pending").order_by(b.first_seq)
    return [str(i) for i in uow.connection.scalars(query)]


def test_a_connection_removed_mid_claim_stops_pushes(
    service: Any, make_runner: Any, recorder: Recorder
) -> None:
    connect(service)
    queue(service, 250)

    def disconnect_while_sending(request: httpx.Request) -> int:
        service.admin.disable_connection()
        return 200

    recorder.script = [disconnect_while_sending]
    report = make_runner(connection_recheck=0).run_once()
    assert [o.result for o in report.outcomes] == ["delivered"]
    assert len(recorder.requests) == 1  # the claimed batches behind it were not sent
    figures = status(service)
    assert (figures.batches["pending"], figures.batches["sending"]) == (2, 0)


def test_the_connection_is_read_once_per_recheck_interval(
    service: Any, make_runner: Any, recorder: Recorder, monkeypatch: Any
) -> None:
    connect(service)
    queue(service, 500)
    reads: list[int] = []
    original = service.admin.connection

    def counting() -> Any:
        reads.append(1)
        return original()

    monkeypatch.setattr(service.admin, "connection", counting)
    report = make_runner(connection_recheck=60).run_once()
    assert report.delivered_events == 500
    assert len(reads) == 1  # at the start of the loop, not once per batch


def test_a_platform_claim_is_one_batch_with_a_one_batch_lease(
    service: Any, make_runner: Any
) -> None:
    connect(service, transport="platform")
    runner = make_runner(deadline=15.0)
    transport = runner.transport()
    assert transport.max_requests_per_batch == 20
    assert runner.batches_per_claim(transport) == 1
    assert runner.lease_for(transport, 1) == timedelta(seconds=20 * 15) + runner.lease_margin
    connect(service)
    assert runner.batches_per_claim(runner.transport()) == 10


def test_a_closed_runner_client_refuses_a_request(service: Any) -> None:
    client = http_client.build_http_client(service.settings)
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.post(f"{PLATFORM}/v1/events", content=b"[]")


def test_an_imported_list_reaches_the_platform_in_ordinary_batches_on_the_ladder(
    service: Any, make_runner: Any, recorder: Recorder, clock: FakeClock
) -> None:
    import io

    from newsletter_connector.service.importing import ImportOptions, ImportSource, Provenance

    lines = "".join(f"reader{n:03d}@example.org\n" for n in range(120))
    importer = service.subscriber_import
    options = ImportOptions(provenance=Provenance("old list", "2024-01-01T00:00:00Z"))
    plan = importer.plan(ImportSource("list", lambda: io.BytesIO(lines.encode())), options)
    assert importer.run(plan).counts["added"] == 120
    connect(service)
    recorder.script = [500]
    runner = make_runner()
    runner.run_once()  # the first batch fails and goes back on the ladder; the others go
    assert [len(batch) for batch in recorder.event_ids()] == [100, 100, 40]
    assert status(service).undelivered_events == 100
    clock.advance(retry_delay(1))
    runner.run_once()
    ids = recorder.event_ids()
    assert [len(batch) for batch in ids] == [100, 100, 40, 100]
    assert ids[3] == ids[0]  # the same batch, resent whole
    sent = [event for body in recorder.bodies()[1:] for event in body]
    assert [e["type"] for e in recorder.bodies()[0][:2]] == [
        "newsletter.signup",
        "newsletter.confirmed",
    ]
    assert {e["payload"]["email"] for e in sent} == {
        f"reader{n:03d}@example.org" for n in range(120)
    }
    assert status(service).undelivered_events == 0


def test_a_runner_without_a_connection_says_so_once_until_one_comes_and_goes(
    service: Any, caplog: pytest.LogCaptureFixture
) -> None:
    runner = SyncRunner(service, periodic_tasks=[])
    said = "no platform connection configured: events stay queued until one is set"
    with caplog.at_level(logging.WARNING, logger="newsletter_connector.sync.runner"):
        runner.run_once()
        runner.run_once()
        assert [r.getMessage() for r in caplog.records].count(
            said + " (newsletter-connector connection set)"
        ) == 1
        service.admin.set_connection(
            platform_base="https://platform.example.test", transport="events", token="t" * 32
        )
        runner.connection_recheck = 0
        assert runner.run_once().connected
        service.admin.disable_connection()
        runner.run_once()
    assert sum(said in r.getMessage() for r in caplog.records) == 2
