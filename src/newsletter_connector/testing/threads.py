"""Running one function in several threads at once, for concurrency checks."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_together(target: Callable[[], object], count: int) -> list[BaseException]:
    """Call ``target`` in ``count`` threads released together; the errors they raised."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            target()
        except BaseException as error:  # reported to the caller
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
