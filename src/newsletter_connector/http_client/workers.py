"""Threads that run blocking work (a request, a name look-up) so a caller can stop waiting at
a deadline.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable


class Job:
    """One request handed to a worker thread, and what became of it."""

    def __init__(self, run: Callable[[], None]) -> None:
        self.run = run
        self.done = threading.Event()
        #: Set when the caller stopped waiting: the worker then exits instead of being reused.
        self.abandoned = False


class RequestWorkers:
    """Reused threads running one job at a time (starting a thread per request costs more than
    a keep-alive request). A job never waits for a busy thread; a worker whose job was abandoned
    exits when it ends; at most one idle worker is kept, for :attr:`idle_seconds`.
    """

    THREAD_NAME = "newsletter-sync-request"

    def __init__(self, *, idle_seconds: float = 30.0, thread_name: str = THREAD_NAME) -> None:
        self.idle_seconds = idle_seconds
        self.thread_name = thread_name
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[Job | None]] = []

    def submit(self, job: Job) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(
                target=self._work, args=(inbox,), name=self.thread_name, daemon=True
            ).start()
        inbox.put(job)

    def _work(self, inbox: queue.SimpleQueue[Job | None]) -> None:
        while True:
            try:
                job = inbox.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # nobody took this worker meanwhile: retire
                        self._idle.remove(inbox)
                        return
                job = inbox.get()  # a submitter took it just now; its job is on the way
            if job is None:
                return
            job.run()
            with self._lock:
                if job.abandoned or self._idle:
                    return
                self._idle.append(inbox)

    def close(self) -> None:
        """Let idle workers exit (busy ones exit when their job ends)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)
