"""Starting the real service in a subprocess for tests (gunicorn on a free loopback port)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from .waiting import free_port


def wait_until_listening(url: str, process: subprocess.Popen[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else ""
            raise RuntimeError(f"server exited with {process.returncode}:\n{output}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening at {url}")


@contextmanager
def serving(
    command: Sequence[str], *, probe_url: str, env: dict[str, str], cwd: Path | None = None
) -> Iterator[subprocess.Popen[str]]:
    """Run a server ``command`` until the block ends; its combined output stays readable from
    ``process.stdout`` after the block (the process has exited by then)."""
    process = subprocess.Popen(
        list(command),
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_listening(probe_url, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving_to_file(
    command: Sequence[str], *, probe_url: str, env: dict[str, str], log_path: Path
) -> Iterator[subprocess.Popen[str]]:
    """:func:`serving` with the output in ``log_path`` rather than a pipe, for a server that
    logs more than a pipe holds (an access-log line per request would fill it and block the
    server)."""
    with log_path.open("w") as log:
        process = subprocess.Popen(
            list(command),
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        wait_until_listening(probe_url, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def running(
    args: Sequence[str], *, env: dict[str, str], cwd: Path | None = None, probe_path: str = "/"
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run ``python -m newsletter_connector ARGS --bind 127.0.0.1:<port>``; yield base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "newsletter_connector", *args, "--bind", f"127.0.0.1:{port}"]
    with serving(command, probe_url=base + probe_path, env=env, cwd=cwd) as process:
        yield base, process
