"""A real sync runner (``newsletter-connector sync`` in a subprocess) delivering a queue of
events to a local receiver, for the tests that take its database away mid-run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newsletter_connector.service.events import queue_event
from tests.support import sync_payloads as p
from tests.support.delivery_checks import assert_every_event_once_or_resent_whole
from tests.support.tls_receiver import TlsReceiver
from tests.support.waiting import wait_until

TOKEN = "platform-token-0123456789"


@dataclass
class RunningSync:
    """The runner's process, its receiver, the ids of the events queued, and its log file."""

    process: subprocess.Popen[bytes]
    receiver: TlsReceiver
    ids: list[str]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        """SIGTERM, and wait for it to finish the batch in flight and exit."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)

    def assert_delivered_cleanly(self) -> None:
        """It exited 0, every event arrived (once, or resent in its whole batch), and the
        platform token never reached its log."""
        assert self.process.returncode == 0
        assert_every_event_once_or_resent_whole([r.body for r in self.receiver.received], self.ids)
        assert TOKEN not in self.log()


@contextmanager
def sync_runner(
    service: Any,
    tmp_path: Path,
    *,
    events: int,
    slow_seconds: float,
    env: dict[str, str] | None = None,
) -> Iterator[RunningSync]:
    """Queue ``events`` contact messages on ``service``, connect it to a receiver that takes
    ``slow_seconds`` per request, and run the sync runner (``env``: extra settings) until the
    block ends; it is killed then if still running."""
    with service.storage.transaction() as uow:
        ids = [
            queue_event(uow, service.context, "contact.message", {**p.message(), "id": str(n)})
            for n in range(events)
        ]
    receiver = TlsReceiver(tmp_path)
    receiver.default = "slow"
    receiver.slow_seconds = slow_seconds
    service.admin.set_connection(platform_base=receiver.base, transport="events", token=TOKEN)
    settings = service.settings
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    environ.update(
        env or {},
        NEWSLETTER_DATABASE_URL=settings.database_url,
        NEWSLETTER_BASE_URL=settings.base_url,
        NEWSLETTER_SITE_SECRET=settings.site_secret.get_secret_value(),
        SSL_CERT_FILE=str(receiver.ca_file),
    )
    command = [sys.executable, "-m", "newsletter_connector", "sync", "--poll-interval", "0.2"]
    command += ["--request-deadline", "2", "--lease-margin", "0.5"]
    log_path = tmp_path / "runner.log"
    log = log_path.open("w")  # a file: a full pipe would block the runner
    process = subprocess.Popen(command, env=environ, stdout=subprocess.DEVNULL, stderr=log)
    try:
        yield RunningSync(process, receiver, ids, log_path)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        receiver.close()
        log.close()


def undelivered(service: Any) -> int:
    with service.storage.transaction(write=False) as uow:
        return int(uow.outbox.status().undelivered_events)


def wait_until_answered(condition: Any, timeout: float) -> bool:
    """:func:`~.waiting.wait_until`, counting a condition that raises (the database may still
    be coming up) as not yet true."""

    def answered() -> bool:
        try:
            return bool(condition())
        except Exception:
            return False

    return wait_until(answered, timeout, interval=0.1)
