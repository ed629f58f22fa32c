"""Reliability, crash: the sync runner is killed with SIGKILL at random moments while
it delivers thousands of events, and restarted each time. In the end every event has been
delivered, none is lost, and the only repeats are whole batches resent with the same ids.

The first kill always lands while a batch is on the wire (the receiver holds that request
unanswered until the runner is dead, so a resend is always exercised), the second during
start-up or the first claim, before anything is sent; the rest are random (a seeded generator;
the seed is in the failure message) so over many runs they land everywhere: mid-request,
mid-claim, mid-settle, between batches. The long variant (``--run-slow``)
delivers 20,000 events through 15 kills.

The runners use a one-second request deadline, so leases are short; on a loaded machine a
request may outlive it and its batch wait on the retry ladder. That is a delay, not a loss, so
the last wait brings such batches forward as an operator would, and says how many it did.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from newsletter_connector.service.events import queue_event
from tests.support import sync_payloads as p
from tests.support.delivery_checks import assert_every_event_once_or_resent_whole
from tests.support.servers import kill_survivors
from tests.support.tls_receiver import TlsReceiver

pytestmark = pytest.mark.system

TOKEN = "platform-token-0123456789"
RUNNER = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.1"]
# A short lease, so a killed runner's batch comes back quickly: deadline 1 s + margin 0.3 s.
RUNNER += ["--request-deadline", "1", "--lease-margin", "0.3"]


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[TlsReceiver]:
    server = TlsReceiver(tmp_path)
    server.default = "slow"  # each answer takes a moment, so kills often land mid-request
    server.slow_seconds = 0.05
    yield server
    server.close()


def queue(service: Any, count: int) -> list[str]:
    ids: list[str] = []
    for start in range(0, count, 1000):
        with service.storage.transaction() as uow:
            ids += [
                queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
                for n in range(start, min(start + 1000, count))
            ]
    return ids


def undelivered(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.outbox.status().undelivered_events)


def drain(service: Any, *, within: float = 120, stall: float = 3) -> int:
    """Wait for the last runner to deliver everything. A request that outlived the test's
    one-second deadline on a loaded machine waits on the retry ladder (a minute, then ten);
    when nothing has moved for ``stall`` seconds, bring such batches forward as an operator
    would (``outbox retry-now``). How many batches were brought forward."""
    brought_forward = 0
    deadline = time.monotonic() + within
    left, moved_at = undelivered(service), time.monotonic()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        now_left = undelivered(service)
        if now_left != left:
            left, moved_at = now_left, time.monotonic()
        elif time.monotonic() - moved_at > stall:
            brought_forward += service.admin.retry_outbox_now()
            moved_at = time.monotonic()
    return brought_forward


def unusual_lines(log: Path) -> str:
    """The runner log's lines other than delivered requests and start-ups, for a failure."""
    usual = ("200 OK", "sync runner started", "scheduled digests are off")
    lines = [line for line in log.read_text().splitlines() if not any(u in line for u in usual)]
    return "\n".join(lines[-40:])


def crash_and_recover(
    service: Any, settings: Any, receiver: TlsReceiver, tmp_path: Path, events: int, kills: int
) -> None:
    ids = queue(service, events)
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        NEWSLETTER_DATABASE_URL=settings.database_url,
        NEWSLETTER_BASE_URL=settings.base_url,
        NEWSLETTER_SITE_SECRET=settings.site_secret.get_secret_value(),
        SSL_CERT_FILE=str(receiver.ca_file),
    )
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    log = (tmp_path / "runner.log").open("w")
    killed_mid_request = 0
    runners: list[subprocess.Popen[bytes]] = []
    try:
        for kill in range(kills):
            runner = subprocess.Popen(RUNNER, env=env, stdout=subprocess.DEVNULL, stderr=log)
            runners.append(runner)
            if kill == 1:
                # at any moment of start-up or its first claim, before it sends anything
                time.sleep(rng.uniform(0, 1.0))
            else:
                # let it deliver something first (start-up, and a returned lease, take a moment)
                before = len(receiver.received)
                deadline = time.monotonic() + 20
                while len(receiver.received) == before and time.monotonic() < deadline:
                    time.sleep(0.01)
                if kill == 0:
                    # the first kill lands while a batch is on the wire: the receiver holds the
                    # next request unanswered, so it is sent, never settled, and must come back
                    # and be resent whole
                    with receiver.lock:
                        receiver.script.append("hold")
                    assert receiver.held.wait(20), f"no request was held (seed {seed})"
                else:
                    time.sleep(rng.uniform(0, 0.3))
            in_flight = bool(receiver.in_flight)
            runner.send_signal(signal.SIGKILL)
            assert runner.wait(10) == -signal.SIGKILL
            killed_mid_request += in_flight and bool(receiver.in_flight)
            receiver.release.set()
        assert undelivered(service) > 0, f"all delivered before the last kill (seed {seed})"
        last = subprocess.Popen(RUNNER, env=env, stdout=subprocess.DEVNULL, stderr=log)
        runners.append(last)
        brought_forward = drain(service)
        assert undelivered(service) == 0, (
            f"not everything was delivered (seed {seed}); the runners said:\n"
            + unusual_lines(tmp_path / "runner.log")
        )
        last.send_signal(signal.SIGTERM)
        assert last.wait(30) == 0
    finally:
        kill_survivors(runners)
        log.close()
    resends = assert_every_event_once_or_resent_whole([r.body for r in receiver.received], ids)
    print(
        f"seed {seed}: {kills} kills ({killed_mid_request} mid-request), {resends} resends, "
        f"{brought_forward} batch(es) brought forward from a later rung"
    )
    assert killed_mid_request >= 1, f"no kill landed mid-request (seed {seed})"
    assert resends >= 1, f"the batch killed mid-request was not resent (seed {seed})"
    assert TOKEN not in (tmp_path / "runner.log").read_text()


def test_sigkill_at_random_points_loses_nothing(
    newsletter_service: Any, newsletter_settings: Any, receiver: TlsReceiver, tmp_path: Path
) -> None:
    crash_and_recover(
        newsletter_service, newsletter_settings, receiver, tmp_path, events=3000, kills=4
    )


@pytest.mark.slow
def test_sigkill_at_random_points_loses_nothing_long(
    newsletter_service: Any, newsletter_settings: Any, receiver: TlsReceiver, tmp_path: Path
) -> None:
    crash_and_recover(
        newsletter_service, newsletter_settings, receiver, tmp_path, events=20_000, kills=15
    )
