"""``newsletter-connector sync`` and ``outbox ...`` as real subprocesses, including a SIGKILL
crash in mid-batch and a SIGTERM that finishes the batch in flight."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.plugins.platform_transport import ISSUE_PATH
from newsletter_connector.service.events import queue_event
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support import sync_payloads as p
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import wait_until

pytestmark = pytest.mark.system

TOKEN = "platform-token-0123456789"
CLI = [sys.executable, "-m", "newsletter_connector"]


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    yield server
    server.close()


@pytest.fixture
def env(newsletter_settings: Any, receiver: TlsReceiver) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    environ.update(
        NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
        SSL_CERT_FILE=str(receiver.ca_file),  # the runner trusts the standard variable
    )
    return environ


def run(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def queue(service: Any, count: int) -> list[str]:
    with service.storage.transaction() as uow:
        return [
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
            for n in range(count)
        ]


def status(service: Any) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.outbox.status()


def connect(service: Any, receiver: TlsReceiver) -> None:
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)


def test_sync_once_without_a_connection_pushes_nothing(newsletter_service: Any, env: Any) -> None:
    queue(newsletter_service, 2)
    result = run(env, "sync", "--once")
    assert result.returncode == 0, result.stderr
    assert "no connection configured" in result.stdout
    assert status(newsletter_service).unbatched == 2


def test_sync_once_delivers_the_backlog_over_tls(
    newsletter_service: Any, env: Any, receiver: TlsReceiver
) -> None:
    ids = queue(newsletter_service, 120)
    connect(newsletter_service, receiver)
    result = run(env, "sync", "--once")
    assert result.returncode == 0, result.stderr
    assert "delivered 120 event(s) in 2 batch(es)" in result.stdout
    assert receiver.event_ids() == ids
    assert TOKEN not in result.stdout + result.stderr


def test_sync_once_exits_1_when_a_batch_failed_this_attempt(
    newsletter_service: Any, env: Any, receiver: TlsReceiver
) -> None:
    queue(newsletter_service, 2)
    connect(newsletter_service, receiver)
    receiver.script = ["500"]
    failed = run(env, "sync", "--once")
    assert failed.returncode == 1, failed.stderr
    assert "0 batch(es); 1 batch(es) failed this attempt" in failed.stdout
    assert "error: 1 batch(es) failed this attempt" in failed.stderr
    assert status(newsletter_service).batches["pending"] == 1  # kept for the retry

    nothing_due = run(env, "sync", "--once")  # the retry is not due yet
    assert nothing_due.returncode == 0, nothing_due.stderr
    assert "delivered 0 event(s) in 0 batch(es); 0 batch(es) failed" in nothing_due.stdout


def test_outbox_status_failed_replay_and_metrics(newsletter_service: Any, env: Any) -> None:
    queue(newsletter_service, 3)
    now = datetime.now() - timedelta(hours=1)
    with newsletter_service.storage.transaction() as uow:
        (batch,) = uow.outbox.claim_batches(
            now=now, lease_until=now + timedelta(minutes=1), batch_size=2, max_batches=1
        )
        batch_id = batch.id
        uow.outbox.mark_failed(batch_id, error="HTTP 503 from POST /v1/events", at=now)

    shown = run(env, "outbox", "status")
    assert shown.returncode == 0, shown.stderr
    assert "queued (not yet batched): 1 event(s)" in shown.stdout
    assert "failed: 1 batch(es)" in shown.stdout
    assert "last error: HTTP 503 from POST /v1/events" in shown.stdout
    assert "oldest pending event: " in shown.stdout

    failed = run(env, "outbox", "failed")
    assert batch_id in failed.stdout
    assert "2 event(s)" in failed.stdout

    metrics = run(env, "outbox", "metrics")
    assert 'newsletter_outbox_batches{state="failed"} 1.0' in metrics.stdout
    assert "newsletter_outbox_failed_events 2.0" in metrics.stdout
    assert "# TYPE newsletter_outbox_unbatched_events gauge" in metrics.stdout

    both = run(env, "outbox", "replay")
    assert both.returncode == 1
    assert "exactly one of BATCH_ID or --all" in both.stderr
    unknown = run(env, "outbox", "replay", "no-such-batch")
    assert unknown.returncode == 1
    assert "no batch with id" in unknown.stderr

    replayed = run(env, "outbox", "replay", batch_id)
    assert replayed.returncode == 0, replayed.stderr
    assert "replayed 1 batch(es)" in replayed.stdout
    again = run(env, "outbox", "replay", batch_id)
    assert again.returncode == 1
    assert "is pending, not failed" in again.stderr
    assert "replayed 0 batch(es)" in run(env, "outbox", "replay", "--all").stdout
    assert "no failed batches" in run(env, "outbox", "failed").stdout


def test_outbox_retry_now_sends_a_waiting_batch_on_the_next_sync(
    newsletter_service: Any, env: Any, receiver: TlsReceiver
) -> None:
    queue(newsletter_service, 1)
    connect(newsletter_service, receiver)
    assert run(env, "sync", "--once").returncode == 0  # one delivered batch
    waiting_ids = queue(newsletter_service, 2)
    receiver.script = ["500"]
    assert run(env, "sync", "--once").returncode == 1  # one batch waiting for its retry
    queue(newsletter_service, 1)
    now = datetime.now() - timedelta(hours=1)
    with newsletter_service.storage.transaction() as uow:
        (failed,) = uow.outbox.claim_batches(
            now=now, lease_until=now + timedelta(minutes=1), batch_size=1, max_batches=1
        )
        uow.outbox.mark_failed(failed.id, error="HTTP 400", at=now)
    queue(newsletter_service, 1)  # queued, in no batch yet
    before = status(newsletter_service)
    assert before.batches == {"pending": 1, "sending": 0, "delivered": 1, "failed": 1}

    moved = run(env, "outbox", "retry-now")
    assert moved.returncode == 0, moved.stderr
    assert "1 waiting batch(es) are due now" in moved.stdout
    assert "0 waiting batch(es)" in run(env, "outbox", "retry-now").stdout
    assert status(newsletter_service) == before  # moved in time only

    delivered_before = len(receiver.event_ids())
    result = run(env, "sync", "--once")
    assert result.returncode == 0, result.stderr
    assert "delivered 3 event(s) in 2 batch(es)" in result.stdout  # the retry and the queued
    assert set(waiting_ids) <= set(receiver.event_ids()[delivered_before:])
    after = status(newsletter_service)
    assert after.batches["failed"] == 1
    assert after.unbatched == 0
    with newsletter_service.storage.transaction(write=False) as uow:
        assert uow.outbox.get_batch(failed.id).state == "failed"


def test_sigterm_finishes_the_batch_in_flight_and_exits(
    newsletter_service: Any, env: Any, receiver: TlsReceiver
) -> None:
    ids = queue(newsletter_service, 5)
    connect(newsletter_service, receiver)
    receiver.script = ["slow"]
    receiver.slow_seconds = 1.5
    process = subprocess.Popen(
        [*CLI, "sync", "--poll-interval", "0.1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        receiver.wait_for(1)
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "sync runner stopped" in err
    assert receiver.event_ids() == ids
    figures = status(newsletter_service)
    assert figures.batches["delivered"] == 1
    assert figures.batches["sending"] == 0


def test_sigkill_mid_batch_then_restart_delivers_everything(
    newsletter_service: Any, env: Any, receiver: TlsReceiver
) -> None:
    ids = queue(newsletter_service, 250)
    connect(newsletter_service, receiver)
    receiver.script = ["ok", "hang"]  # the second batch is in flight when the runner dies
    command = [
        *CLI,
        "sync",
        "--poll-interval",
        "0.1",
        "--request-deadline",
        "1",
        "--lease-margin",
        "0.5",
    ]
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        receiver.wait_for(2)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    # one claim leased all three batches; the first was delivered but is settled only with
    # the next claim, so the whole claim is still leased
    assert status(newsletter_service).batches["sending"] == 3

    second = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: set(receiver.event_ids()) >= set(ids), timeout=30)
        assert wait_until(lambda: status(newsletter_service).undelivered_events == 0, timeout=10)
        second.send_signal(signal.SIGTERM)
        second.wait(20)
    finally:
        if second.poll() is None:
            second.kill()
    assert second.returncode == 0
    received = receiver.event_ids()
    assert set(received) == set(ids)  # none lost
    sent_unsettled = [[e["id"] for e in r.body] for r in receiver.received[:2]]
    duplicates = {i for i in received if received.count(i) > 1}
    # redelivered only what the dead runner had sent without settling, as whole batches with
    # the same ids (never the batch it had claimed but not sent)
    assert duplicates == {i for batch in sent_unsettled for i in batch}
    assert [[e["id"] for e in r.body] for r in receiver.received[2:4]] == sent_unsettled
    assert status(newsletter_service).batches["delivered"] == 3


def test_two_runner_processes_never_send_the_same_batch_at_once(
    newsletter_service: Any, env: Any, receiver: TlsReceiver
) -> None:
    # 50 batches are five claims of ten (runner.CLAIM_AHEAD): while one runner sends a claim,
    # the other claims and sends another, so both processes contend for the queue
    with newsletter_service.storage.transaction() as uow:
        ids = [
            queue_event(
                uow, newsletter_service.context, "contact.message", {**p.message(), "id": str(n)}
            )
            for n in range(5000)
        ]
    connect(newsletter_service, receiver)
    receiver.default = "slow"
    receiver.slow_seconds = 0.1
    command = [*CLI, "sync", "--poll-interval", "0.1"]
    runners = [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(2)
    ]
    try:
        assert wait_until(lambda: len(receiver.event_ids()) >= len(ids), timeout=60)
        assert wait_until(lambda: status(newsletter_service).undelivered_events == 0, timeout=10)
    finally:
        for runner in runners:
            runner.send_signal(signal.SIGTERM)
        for runner in runners:
            runner.wait(60)  # each finishes its batch first: slow on a loaded machine
    assert receiver.peak_concurrent == 2  # both runners were sending at the same time ...
    assert receiver.overlaps == []  # ... never the same events
    assert sorted(receiver.event_ids()) == sorted(ids)  # each exactly once
    assert status(newsletter_service).batches["delivered"] == 50


def succeed(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = run(env, *args, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def test_platform_transport_never_sends_a_test_issue_but_keeps_it_on_the_site(
    newsletter_service: Any,
    newsletter_settings: Any,
    env: dict[str, str],
    receiver: TlsReceiver,
    auth: dict[str, str],
    tmp_path: Path,
) -> None:
    """A test issue never reaches readers: on the ``platform`` transport it is never sent to
    the newsletter-issue endpoint (which mails or schedules an issue), while a daily issue is;
    it stays on the site, through ``GET /issues`` and ``digest --preview``."""
    newsletter_service.admin.set_connection(
        platform_base=receiver.base, transport="platform", token=TOKEN
    )
    content = tmp_path / "content.json"
    content.write_text(json.dumps(sample_issue_content()), encoding="utf-8")
    preview = tmp_path / "test-issue.html"

    tested = succeed(
        env, "digest", "--kind", "test", "--content", str(content), "--preview", str(preview)
    )
    assert "never" in tested.stdout and "readers" in tested.stdout
    succeed(env, "digest", "--kind", "daily", "--date", "2026-11-21", "--content", str(content))
    synced = succeed(env, "sync", "--once")
    assert "delivered 2 event(s)" in synced.stdout

    issue_pushes = [r.body for r in receiver.received if r.path == ISSUE_PATH]
    daily, test_issue = newsletter_service.issues.list(include_html=True)  # newest first
    assert test_issue.kind == "test" and daily.kind == "daily"
    assert [push["subject"] for push in issue_pushes] == [daily.subject]
    assert not any(test_issue.subject in json.dumps(r.body) for r in receiver.received)
    assert "settled without a request" in synced.stderr  # the runner says what became of it

    # The test issue is still there for the operator to look at.
    client = falcon.testing.TestClient(create_app(newsletter_settings))
    listed = client.simulate_get("/api/newsletter/v1/issues", headers=auth).json
    assert test_issue.subject in [issue["subject"] for issue in listed["data"]]
    assert preview.read_text(encoding="utf-8") == test_issue.html

    # Nothing is left waiting: the test issue's event is settled, not queued forever.
    status = succeed(env, "outbox", "status").stdout
    assert "undelivered events: 0" in status
