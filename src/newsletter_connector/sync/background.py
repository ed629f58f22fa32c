"""The in-process mode: a runner on a background thread beside a small site's WSGI app
(usage: docs/delivery.md). Several runners may share a database: leases keep any batch from
being sent by two at once.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .runner import SyncRunner

if TYPE_CHECKING:
    from ..service import NewsletterService


class BackgroundSync:
    """A :class:`SyncRunner` looping on a daemon thread until :meth:`stop`."""

    def __init__(self, runner: SyncRunner, *, poll_interval: float = 5.0) -> None:
        self.runner = runner
        self.poll_interval = poll_interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> BackgroundSync:
        if self._thread is not None:
            raise RuntimeError("background sync already started")
        self._thread = threading.Thread(
            target=self.runner.run_forever,
            args=(self._stop,),
            kwargs={"poll_interval": self.poll_interval},
            name="newsletter-sync",
            daemon=True,
        )
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float | None = 60.0) -> bool:
        """Ask the loop to stop after the batch in flight; true once the thread has ended."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()


def start_background_sync(
    service: NewsletterService, *, poll_interval: float = 5.0, **runner_options: Any
) -> BackgroundSync:
    """Start a background runner for ``service`` and return it (call ``stop()`` at exit)."""
    runner = SyncRunner(service, **runner_options)
    return BackgroundSync(runner, poll_interval=poll_interval).start()
