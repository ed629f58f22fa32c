"""Under real gunicorn, the largest requests a stranger can send cost what a plain request of
the same size costs: 100 headers of 8 KB each, a 1 MiB form body and a 1 MiB line sent to each
kind of route leave every worker alive (none timed out or killed) and answering a plain request
right after.

The worker timeout here is 10 s: a request whose handling (the access log's redaction
included) took time quadratic in its headers held a worker 30 s and was killed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.servers import running

pytestmark = pytest.mark.system  # real gunicorn, megabytes of requests

WORKER_TIMEOUT = 10
#: gunicorn's own bounds: at most 100 header fields of at most 8,190 bytes a line.
HEADER_VALUE = 8_000
CUSTOM_HEADERS = 90  # besides the few the client adds itself
MIB = 1024 * 1024

#: One route of each kind, with the method a stranger would send there.
ROUTES = (
    ("GET", "/signup"),
    ("POST", "/signup"),
    ("POST", "/contact"),
    ("GET", "/profile/not-a-real-token"),
    ("GET", "/admin/login"),
    ("POST", "/admin/login"),
    ("POST", "/analytics/collect"),
    ("GET", "/api/newsletter/v1/subscribers"),
    ("GET", "/api/listsource/api/lists"),
    ("GET", "/api/export/subscribers"),
)

#: Runs that made a backtracking pattern retry every start: no ``@``, ``%``, ``/``, a token.
RUNS = ("a", "%", "/", "aB3-", "a.b", "%25", "profile/")


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _big_headers() -> dict[str, str]:
    headers = {
        f"X-Hostile-{i}": _fill(RUNS[i % len(RUNS)], HEADER_VALUE) for i in range(CUSTOM_HEADERS)
    }
    headers["User-Agent"] = _fill("a", HEADER_VALUE)
    headers["Referer"] = "https://news.example.test/" + _fill("%", HEADER_VALUE - 30)
    headers["Authorization"] = "Bearer " + _fill("a", HEADER_VALUE - 10)
    headers["Cookie"] = "session=" + _fill("a", HEADER_VALUE - 10)
    return headers


def _bodies() -> list[tuple[str, bytes]]:
    line = _fill("a", MIB - 20).encode()
    return [
        ("application/x-www-form-urlencoded", b"email=" + line + b"&name=" + b"%" * 64),
        ("application/x-www-form-urlencoded", ("name=" + _fill("a.b", MIB)).encode()),
        ("text/csv", b"email,name\n" + line + b"\n"),
        ("application/json", b'{"type": "page_view", "path": "' + line + b'"}'),
    ]


def _plain_request_answers(client: httpx.Client, base: str) -> float:
    began = time.monotonic()
    response = client.get(base + "/signup", timeout=WORKER_TIMEOUT)
    assert response.status_code == 200
    return time.monotonic() - began


def test_huge_headers_and_bodies_on_every_kind_of_route_kill_no_worker(
    tmp_path: Path,
    newsletter_settings: Any,
    newsletter_storage: Any,  # empties the rate-limit counters the server's requests leave
) -> None:
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "hostile-requests-secret",
    }
    log = tmp_path / "serve.log"
    args = ["serve", "--workers", "2", "--timeout", str(WORKER_TIMEOUT)]
    slowest: list[tuple[float, str]] = []
    with (
        running(args, env=env, probe_path="/signup", log_path=log) as (base, _process),
        httpx.Client() as client,
    ):
        headers = _big_headers()
        for method, path in ROUTES:
            began = time.monotonic()
            response = client.request(
                method, base + path, headers=headers, timeout=WORKER_TIMEOUT * 2
            )
            slowest.append((time.monotonic() - began, f"headers {method} {path}"))
            assert response.status_code < 500, (method, path, response.status_code)
            assert _plain_request_answers(client, base) < WORKER_TIMEOUT
        for method, path in ROUTES:
            if method != "POST":
                continue
            for media_type, body in _bodies():
                began = time.monotonic()
                response = client.post(
                    base + path,
                    content=body,
                    headers={"Content-Type": media_type},
                    timeout=WORKER_TIMEOUT * 2,
                )
                slowest.append((time.monotonic() - began, f"{media_type} body {path}"))
                assert response.status_code < 500, (path, media_type, response.status_code)
            assert _plain_request_answers(client, base) < WORKER_TIMEOUT
    text = log.read_text(errors="replace")
    for sign in ("WORKER TIMEOUT", "SIGKILL", "was sent SIG", "Traceback"):
        assert sign not in text, f"{sign!r} in the server's log; slowest: {sorted(slowest)[-3:]}"
    assert text.count("Booting worker") == 2, "a worker was replaced: one died or was killed"
    # Generous: a worker that spent seconds on one of these would show here first.
    assert max(slowest)[0] < WORKER_TIMEOUT / 2, sorted(slowest)[-3:]
