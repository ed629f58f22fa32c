"""A private PostgreSQL server for fault tests: started, stopped and restarted at will, so an
outage can be staged without touching the shared server other tests use."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from tests.support.waiting import free_port


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL server binaries ({name}) are not installed")
    return found[-1]


def _children(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (from ``/proc``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if int(fields[1]) == parent:
            found.append(int(stat.parent.name))
    return found


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


class PrivatePostgres:
    """``initdb`` into a temporary folder, listening only on 127.0.0.1 at a free port."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="nc-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            _as_postgres([_bin("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust"]),
            check=True,
            capture_output=True,
            timeout=120,
        )

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            _as_postgres(
                [
                    _bin("pg_ctl"),
                    "-D",
                    str(self.data),
                    "-o",
                    options,
                    "-w",
                    "-l",
                    str(self.root / "log"),
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=60,
        )

    def stop(self) -> None:
        subprocess.run(
            _as_postgres([_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]),
            check=True,
            capture_output=True,
            timeout=60,
        )

    def pause(self) -> None:
        """``SIGSTOP`` the server and every backend: a hung server. The kernel still accepts
        connections and acknowledges packets, but nothing answers, nothing times out on the
        server's side, and a cancel request waits too. Always :meth:`resume` (in a
        ``finally``)."""
        postmaster = self.postmaster_pid()
        os.kill(postmaster, signal.SIGSTOP)  # first, so it starts no backend meanwhile
        for pid in _children(postmaster):
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        """``SIGCONT`` whatever :meth:`pause` stopped."""
        postmaster = self.postmaster_pid()
        for pid in _children(postmaster):
            os.kill(pid, signal.SIGCONT)
        os.kill(postmaster, signal.SIGCONT)

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def destroy(self) -> None:
        subprocess.run(
            _as_postgres([_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.root, ignore_errors=True)
