"""A private PgBouncer (Debian's ``pgbouncer`` package) in front of a PostgreSQL server, for the
tests that run the service through a pooler: its own configuration, authentication file and
socket folder in a temporary directory, listening on a free loopback port only."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

from sqlalchemy.engine import make_url

from tests.support.waiting import free_port, wait_until

PGBOUNCER = "/usr/sbin/pgbouncer"


class PrivatePgBouncer:
    """PgBouncer in ``pool_mode`` before the server of ``upstream_url`` (a PostgreSQL URL
    without a password): clients sign in as ``user`` with ``password`` (``md5`` auth; PgBouncer
    then connects to the server as the upstream URL's user). Start with :meth:`start`, always
    :meth:`stop`."""

    def __init__(
        self,
        upstream_url: str,
        *,
        pool_mode: str = "transaction",
        user: str = "app",
        password: str = "app-secret-7f3a",
        pool_size: int = 10,
        ignore_startup_parameters: str = "",
    ) -> None:
        self.upstream = make_url(upstream_url)
        self.user, self.password = user, password
        self.pool_mode, self.pool_size = pool_mode, pool_size
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="nc-pgbouncer-"))
        self.log_path = self.root / "pgbouncer.log"
        self.process: subprocess.Popen[bytes] | None = None
        (self.root / "userlist.txt").write_text(f'"{user}" "{password}"\n')
        self.database = self.upstream.database or "postgres"
        self._configure(ignore_startup_parameters)

    def _configure(self, ignore_startup_parameters: str) -> None:
        """Write the configuration: by default PgBouncer refuses a start-up ``options``
        parameter (where the package's server timeouts travel with db_pgbouncer off)."""
        upstream = (
            f"host={self.upstream.host} port={self.upstream.port} dbname={self.database} "
            f"user={self.upstream.username or 'postgres'}"
        )
        (self.root / "pgbouncer.ini").write_text(
            f"""[databases]
{self.database} = {upstream}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = md5
auth_file = {self.root / "userlist.txt"}
pool_mode = {self.pool_mode}
default_pool_size = {self.pool_size}
max_client_conn = 500
ignore_startup_parameters = {ignore_startup_parameters}
logfile = {self.log_path}
pidfile = {self.root / "pgbouncer.pid"}
"""
        )
        if os.geteuid() == 0:  # PgBouncer will not run as root: it switches to postgres (-u)
            shutil.chown(self.root, "postgres", "postgres")
            for path in self.root.iterdir():
                shutil.chown(path, "postgres", "postgres")

    def url(self, *, password: str | None = None, database: str | None = None) -> str:
        """The URL the service uses to reach PostgreSQL through this PgBouncer."""
        secret = self.password if password is None else password
        name = database or self.database
        return f"postgresql://{self.user}:{secret}@127.0.0.1:{self.port}/{name}"

    def restart(self, *, ignore_startup_parameters: str) -> None:
        """Stop, rewrite the configuration with ``ignore_startup_parameters``, start again."""
        self._shut_down()
        self._configure(ignore_startup_parameters)
        self.start()

    def start(self) -> None:
        command = [PGBOUNCER, str(self.root / "pgbouncer.ini")]
        if os.geteuid() == 0:
            command[1:1] = ["-u", "postgres"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if not wait_until(self._listening, timeout=15, interval=0.05):
            self.stop()
            raise RuntimeError(f"PgBouncer did not start:\n{self.log()}")

    def _listening(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"PgBouncer exited:\n{self.log()}")
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def stop(self) -> None:
        """Shut PgBouncer down and remove its folder."""
        self._shut_down()
        shutil.rmtree(self.root, ignore_errors=True)

    def _shut_down(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # PgBouncer's "shut down now"
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
