"""Starting the real service in a subprocess for tests (gunicorn on a free loopback port)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

from tests.support.waiting import free_port


def wait_until_listening(url: str, process: subprocess.Popen[str], timeout: float = 90.0) -> None:
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
def started(
    command: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path | None = None,
    output: IO[str] | None = None,
) -> Iterator[subprocess.Popen[str]]:
    """Run a long-lived ``command`` until the block ends (SIGTERM, then SIGKILL after 15 s);
    its combined output goes to ``output``, or stays readable from ``process.stdout`` after
    the block."""
    process = subprocess.Popen(
        list(command),
        env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
        cwd=cwd,
        stdout=output if output is not None else subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving(
    command: Sequence[str], *, probe_url: str, env: dict[str, str], cwd: Path | None = None
) -> Iterator[subprocess.Popen[str]]:
    """Run a server ``command`` until the block ends, once it answers ``probe_url``; its
    combined output stays readable from ``process.stdout`` after the block (the process has
    exited by then)."""
    with started(command, env=env, cwd=cwd) as process:
        wait_until_listening(probe_url, process)
        yield process


@contextmanager
def serving_to_file(
    command: Sequence[str],
    *,
    probe_url: str,
    env: dict[str, str],
    log_path: Path,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen[str]]:
    """:func:`serving` with the output in ``log_path`` rather than a pipe, for a server that
    logs more than a pipe holds (an access-log line per request would fill it and block the
    server)."""
    with log_path.open("w") as log, started(command, env=env, cwd=cwd, output=log) as process:
        wait_until_listening(probe_url, process)
        yield process


@contextmanager
def running(
    args: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path | None = None,
    probe_path: str = "/",
    log_path: Path | None = None,
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run ``python -m newsletter_connector ARGS --bind 127.0.0.1:<port>``; yield base URL.
    Its output is read from ``process.stdout``, or goes to ``log_path`` when the server will
    log more than a pipe holds (:func:`serving_to_file`)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "newsletter_connector", *args, "--bind", f"127.0.0.1:{port}"]
    probe_url = base + probe_path
    server = (
        serving(command, probe_url=probe_url, env=env, cwd=cwd)
        if log_path is None
        else serving_to_file(command, probe_url=probe_url, env=env, log_path=log_path, cwd=cwd)
    )
    with server as process:
        yield base, process


def kill_survivors(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGKILL and reap each of ``processes`` still running: a test that fails part way must
    not leave one polling on after it."""
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(10)
