"""A bulk job survives SIGKILLs of the sync runner working through it: killed mid-chunk at
random moments and restarted each time (the killed runner's lease ended at once, as if its
minute had passed), the job still acts on every match exactly once: each subscriber is
unsubscribed with one event, and the job's counts are exact (a chunk applied twice would
count its subscribers as already unsubscribed)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from newsletter_connector.plugins.sql_store.tables import bulk_jobs
from newsletter_connector.storage.subscriber_query import SubscriberFilter
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.servers import kill_survivors

pytestmark = pytest.mark.system

RUNNER = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.1"]
MATCHING = 4000
KILLS = 3


def _seed(service: Any) -> None:
    with service.storage.transaction() as uow:
        for n in range(MATCHING + 50):
            status = "bounced" if n < MATCHING else "confirmed"
            uow.subscribers.add(make_subscriber_data(f"r{n:05d}@example.org", status=status))


def _done(service: Any, job_id: int) -> int:
    return int(service.subscriber_jobs.get(job_id).done)


def _end_the_lease(service: Any, job_id: int) -> None:
    """What a minute without the killed runner does: its lease ends."""
    past = service.context.clock() - timedelta(seconds=1)
    with service.storage.transaction() as uow:
        uow.connection.execute(
            update(bulk_jobs).where(bulk_jobs.c.id == job_id).values(lease_until=past)
        )


def _undelivered(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.outbox.status().undelivered_events)


def test_sigkill_mid_job_then_restart_acts_on_each_match_once(
    newsletter_service: Any, newsletter_settings: Any, tmp_path: Path
) -> None:
    service = newsletter_service
    _seed(service)
    job = service.subscriber_jobs.start(
        "unsubscribe",
        SubscriberFilter(status="bounced"),
        filter_text="status=bounced",
        requested_by="ada",
        expected=MATCHING,
        expected_exact=True,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
    )
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    killed_unfinished = 0
    runners: list[subprocess.Popen[bytes]] = []
    with (tmp_path / "runner.log").open("w") as log:
        try:
            for _kill in range(KILLS):
                before = _done(service, job.id)
                runner = subprocess.Popen(RUNNER, env=env, stdout=subprocess.DEVNULL, stderr=log)
                runners.append(runner)
                deadline = time.monotonic() + 60
                while _done(service, job.id) == before and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(rng.uniform(0, 0.2))
                runner.send_signal(signal.SIGKILL)
                assert runner.wait(10) == -signal.SIGKILL
                killed_unfinished += service.subscriber_jobs.get(job.id).finished_at is None
                _end_the_lease(service, job.id)
            last = subprocess.Popen(RUNNER, env=env, stdout=subprocess.DEVNULL, stderr=log)
            runners.append(last)
            deadline = time.monotonic() + 180
            while service.subscriber_jobs.get(job.id).finished_at is None:
                assert time.monotonic() < deadline, f"the job did not finish (seed {seed})"
                time.sleep(0.1)
            last.send_signal(signal.SIGTERM)
            assert last.wait(60) == 0
        finally:
            kill_survivors(runners)
    assert killed_unfinished >= 1, f"every kill came after the job ended (seed {seed})"
    done = service.subscriber_jobs.get(job.id)
    assert (done.changed, done.unchanged, done.missing) == (MATCHING, 0, 0), seed
    assert _undelivered(service) == MATCHING  # one newsletter.unsubscribed each
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.count(status="unsubscribed") == MATCHING
        assert uow.subscribers.count(status="confirmed") == 50
