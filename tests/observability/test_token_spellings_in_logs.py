"""``serve``'s logs (access and error, as text and as JSON) never hold a live link token, in
whatever spelling a request carries it: a blank, tab or line break before it, ``;params``,
``/./``, four layers of percent-encoding, bare, or in a request line gunicorn refuses."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.support.servers import serving_to_file
from tests.support.waiting import free_port

pytestmark = pytest.mark.system  # a real gunicorn server per log format

EMAIL = "spelling.reader@example.org"


def _encoded(text: str, layers: int) -> str:
    """``text`` with its first character percent-encoded ``layers`` times."""
    first = f"%{ord(text[0]):02X}"
    for _ in range(layers - 1):
        first = quote(first, safe="")
    return first + text[1:]


def spellings(token: str) -> list[str]:
    return [
        f"/profile/%20{token}",
        f"/profile/%09{token}",
        f"/profile/%0A{token}",
        f"/profile;a=b/{token}",
        f"/profile/./{token}",
        f"/profile/{_encoded(token, 4)}",
        f"/{_encoded('profile', 4)}/{_encoded(token, 4)}",
        f"/somewhere/{token}",
    ]


def send_raw(port: int, request_line: bytes) -> bytes:
    """A request line sent as it is (httpx would refuse to send it), and the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request_line + b"\r\nHost: x\r\n\r\n")
        return conn.recv(4096)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_spelling_of_a_token_reaches_the_access_or_error_log(
    newsletter_service: Any, newsletter_settings: Any, tmp_path: Path, log_format: str
) -> None:
    token = newsletter_service.subscribers.subscribe({"email": EMAIL}).record.profile_token
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")},
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": base,
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",  # served on loopback, as a local trial
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_LOG_FORMAT": log_format,
    }
    command = [sys.executable, "-m", "newsletter_connector", "serve", "--workers", "1"]
    with (
        serving_to_file(
            [*command, "--bind", f"127.0.0.1:{port}"],
            probe_url=base + "/healthz",
            env=env,
            log_path=log,
        ),
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        for path in spellings(token):
            client.get(path, headers={"Referer": base + path, "User-Agent": "ua " + path})
        answer = send_raw(port, f"G{token} /profile/{token} HTTP/1.1".encode())
        client.get("/healthz")
    assert answer.startswith(b"HTTP/1.1 400"), answer
    text = log.read_text()
    assert "Invalid HTTP method" in text, text  # the refused line was logged ...
    assert "somewhere/[redacted]" in text, text  # ... and so was every request
    for part in (token, token[1:], token[:-1]):
        assert part not in text, text
