"""``serve`` bounds what a slow client can hold: under real gunicorn, a client trickling its
request body is cut off within the worker timeout while other clients are served."""

from __future__ import annotations

import select
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.servers import running

pytestmark = pytest.mark.system

TIMEOUT = 3
#: gunicorn's arbiter looks at its workers about once a second, then kills and reaps.
SLACK = 4


def _trickle_until_cut(host: str, port: int, limit: float) -> float | None:
    """Send a POST whose body arrives a byte every half second; seconds until the server
    closed the connection, or ``None`` if it was still open after ``limit`` seconds."""
    started = time.monotonic()
    with socket.create_connection((host, port)) as slow:
        slow.sendall(
            b"POST /signup HTTP/1.1\r\nHost: news.example.test\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 100000\r\n\r\nemail="
        )
        while time.monotonic() - started < limit:
            try:
                slow.sendall(b"a")
                readable, _, _ = select.select([slow], [], [], 0.5)
                if readable and slow.recv(4096) == b"":
                    return time.monotonic() - started
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - started
    return None


def test_a_slow_body_is_cut_off_within_the_timeout_while_others_are_served(
    newsletter_settings: Any,
    newsletter_storage: Any,  # empties the rate-limit counters the server's requests leave
) -> None:
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "slow-client-secret",
    }
    args = ["serve", "--workers", "2", "--timeout", str(TIMEOUT)]
    with running(args, env=env, probe_path="/signup") as (base, process):
        parts = urlsplit(base)

        cut_after: list[float | None] = []
        slow = threading.Thread(
            target=lambda: cut_after.append(
                _trickle_until_cut(str(parts.hostname), int(parts.port or 80), 4 * TIMEOUT)
            )
        )
        slow.start()
        time.sleep(1)
        # While the slow client holds one worker, the other answers at once.
        for _ in range(3):
            answered = httpx.get(base + "/signup", timeout=2)
            assert answered.status_code == 200
        slow.join()
    assert cut_after[0] is not None, "the slow client was never cut off"
    assert cut_after[0] <= TIMEOUT + SLACK
    assert "WORKER TIMEOUT" in (process.stdout.read() if process.stdout else "")
