"""An import survives SIGKILLs: ``newsletter-connector subscribers import`` of a large file, in a
real process, is killed at random moments mid-file and started again each time, then run to its
end. Each chunk is stored whole or not at all, with its events; in the end every address of the
file is stored once with exactly its two events (``newsletter.signup``, then
``newsletter.confirmed``), none queued twice, and the last run counts the lines the killed runs
stored as unchanged."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from newsletter_connector.plugins.sql_store.tables import outbox_events, subscribers
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.service.importing import CHUNK

pytestmark = pytest.mark.system

IMPORT = [sys.executable, "-m", "newsletter_connector", "subscribers", "import"]
LINES = 30_000
KILLS = 3
#: The events of each line, in order.
_SIGNUP = ["newsletter.signup", "newsletter.confirmed"]


def _write_file(path: Path) -> list[str]:
    """A file of :data:`LINES` readers, each with their consent; the addresses."""
    emails = [f"reader{n:06d}@example.org" for n in range(LINES)]
    with path.open("w", encoding="utf-8") as out:
        out.write("email,first_name,consent_source,consent_collected_at\n")
        for email in emails:
            out.write(f"{email},Reader,spring fair,2025-05-01T10:00:00Z\n")
    return emails


def _stored(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.subscribers.count())


def _event_count(service: Any) -> int:
    with service.storage.engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(outbox_events)))


def test_sigkill_mid_file_then_again_stores_each_line_once_with_its_events(
    newsletter_service: Any, newsletter_settings: Any, tmp_path: Path
) -> None:
    service = newsletter_service
    emails = _write_file(tmp_path / "list.csv")
    command = [*IMPORT, str(tmp_path / "list.csv")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env.update(
        NEWSLETTER_DATABASE_URL=newsletter_settings.database_url,
        NEWSLETTER_BASE_URL=newsletter_settings.base_url,
        NEWSLETTER_SITE_SECRET=newsletter_settings.site_secret.get_secret_value(),
        NEWSLETTER_CONFIG="",
    )
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    kills: list[int] = []
    with (tmp_path / "import.log").open("w") as log:
        for _kill in range(KILLS):
            before = _stored(service)
            process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
            try:
                deadline = time.monotonic() + 60
                while _stored(service) == before:
                    assert process.poll() is None, f"the import ended early (seed {seed})"
                    assert time.monotonic() < deadline, f"the import stored nothing (seed {seed})"
                    time.sleep(0.01)
                time.sleep(rng.uniform(0, 0.5))
                process.send_signal(signal.SIGKILL)
                assert process.wait(10) == -signal.SIGKILL
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait(10)
            stored = _stored(service)
            # Killed mid-file; each chunk stored whole, with both its events for each line.
            assert before < stored < LINES, (kills, stored, seed)
            assert stored % CHUNK == 0, (stored, seed)
            assert _event_count(service) == 2 * stored, (stored, seed)
            kills.append(stored)

        last = subprocess.run(
            command, env=env, stdout=subprocess.PIPE, stderr=log, text=True, timeout=300
        )
    assert last.returncode == 0, (last.stdout, seed)
    assert last.stdout.splitlines()[-3:] == [
        f"{LINES:,} lines read after the header; done",
        f"  added, confirmed: {LINES - kills[-1]:,}",
        f"  unchanged: {kills[-1]:,}",
    ], (kills, seed)
    assert "@" not in last.stdout

    with service.storage.engine.connect() as connection:
        stored_emails = connection.scalars(select(subscribers.c.email)).all()
        events = connection.execute(
            select(
                outbox_events.c.subscriber_key,
                outbox_events.c.event_type,
                outbox_events.c.event_id,
            ).order_by(outbox_events.c.seq)
        ).all()
    assert len(stored_emails) == LINES and set(stored_emails) == set(emails), (kills, seed)
    by_key: dict[str, list[str]] = defaultdict(list)
    for key, event_type, _ in events:
        by_key[key].append(event_type)
    expected_keys = {subscriber_key(service.context, email) for email in emails}
    assert by_key.keys() == expected_keys, (kills, seed)
    wrong = {key: types for key, types in by_key.items() if types != _SIGNUP}
    assert not wrong, (len(wrong), next(iter(wrong.items())), kills, seed)
    assert len(events) == 2 * LINES
    assert len({event_id for _, _, event_id in events}) == 2 * LINES
    with service.storage.transaction(write=False) as uow:
        assert uow.subscribers.count(status="confirmed") == LINES
    # Each run is audited as it starts, so the runs killed before their end are recorded too.
    acts = [(act.action, act.target) for act in service.admin_audit.latest(10)]
    assert acts == [("subscribers.import", f"add: {LINES + 1:,} lines")] * (KILLS + 1), seed
