"""Running the user docs' shell blocks as a newcomer runs them: in a fresh ``bash -euo
pipefail`` in a folder of their own, with this Python's commands and the system's on ``PATH``
and none of the suite's settings in the environment, only the ones a page tells the reader to
set."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.servers import started

#: This Python's commands (``newsletter-connector``, ``gunicorn``, ``pybabel`` …), then the
#: system's (``curl``, ``mv``).
PATH = f"{Path(sys.executable).parent}:/usr/bin:/bin"


def replaced(text: str, swaps: dict[str, str]) -> str:
    """``text`` with each of ``swaps`` made, each exactly once (so an edit of the docs that
    moves one fails the test, not silently)."""
    for old, new in swaps.items():
        assert text.count(old) == 1, f"the block no longer holds {old!r} once:\n{text}"
        text = text.replace(old, new)
    return text


def without_comments(block: str) -> str:
    """A block's commands with its ``# …`` comment lines (shown output) left out."""
    return "".join(line + "\n" for line in block.splitlines() if not line.startswith("#"))


def comment_lines(block: str) -> list[str]:
    """What a block's comment lines show (the output it prints), without the ``# ``."""
    return [line[2:] for line in block.splitlines() if line.startswith("# ")]


def exec_last(script: str) -> str:
    """``script`` with its last command run in the shell's place (``exec``)."""
    *before, last = script.rstrip("\n").split("\n")
    assignments, command = re.fullmatch(r"((?:\w+=\S*\s+)*)(.*)", last).groups()  # type: ignore[union-attr]
    return "\n".join([*before, f"{assignments}exec {command}"])


class Shell:
    """A folder and the environment of a fresh shell in it."""

    def __init__(self, folder: Path, **variables: str) -> None:
        self.folder = folder
        self.env = {"PATH": PATH, "HOME": str(folder), **variables}

    def run(
        self, script: str, *, stdin: str = "", check: bool = True, **variables: str
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            env={**self.env, **variables},
            cwd=self.folder,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
        )
        if check:
            assert result.returncode == 0, f"{script}\n{result.stdout}\n{result.stderr}"
        return result

    @contextmanager
    def running(
        self, command: str, *, probe_url: str | None = None, says: str | None = None
    ) -> Iterator[Path]:
        """Run a long-running ``command`` (the last line of a script; it takes the shell's
        place, so stopping it stops the command) until the block ends, once it answers
        ``probe_url`` or its output holds ``says``; yields the file its output goes to. It is
        stopped by SIGTERM, as a service manager stops it, and must exit by itself."""
        log = self.folder / f"running-{time.monotonic_ns()}.log"
        with (
            log.open("w") as output,
            started(
                ["bash", "-euo", "pipefail", "-c", exec_last(command)],
                env=self.env,
                cwd=self.folder,
                output=output,
            ) as process,
        ):
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None, f"{command} exited:\n{log.read_text()}"
                assert time.monotonic() < deadline, f"{command} never answered:\n{log.read_text()}"
                if says is not None and says in log.read_text():
                    break
                if probe_url is not None:
                    try:
                        httpx.get(probe_url, timeout=5)
                        break
                    except httpx.TransportError:
                        pass
                time.sleep(0.2)
            yield log
            process.terminate()
            assert process.wait(timeout=60) in (0, -15), log.read_text()
