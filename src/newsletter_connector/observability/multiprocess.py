"""``prometheus_client``'s multiprocess mode under gunicorn: every worker writes its figures to
files in one directory, and a scrape of any worker sums them all.

``serve`` calls :func:`prepare_directory` in the gunicorn master before any worker starts (so
before ``prometheus_client`` is imported in a worker), passes :func:`child_exit` as gunicorn's
``child_exit`` hook and :func:`on_exit` as its ``on_exit`` hook. A host with its own gunicorn
config does the same in its ``gunicorn.conf.py`` (docs/mounting/gunicorn.md).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .exposition import MULTIPROC_ENV

#: The directory :func:`prepare_directory` created in this (master) process, for :func:`on_exit`.
_created: list[Path] = []


def prepare_directory() -> Path:
    """Make ``$PROMETHEUS_MULTIPROC_DIR`` fresh and return it: emptied of every file a previous
    run left (their process ids may be reused) when the variable is set, else a new private
    temporary directory, exported in the variable for the workers to inherit."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        directory = Path(given)
        directory.mkdir(parents=True, exist_ok=True)
        for leftover in directory.glob("*.db"):
            leftover.unlink()
        return directory
    directory = Path(tempfile.mkdtemp(prefix="newsletter-metrics-"))
    os.environ[MULTIPROC_ENV] = str(directory)
    _created.append(directory)
    return directory


def child_exit(server: Any, worker: Any) -> None:
    """gunicorn ``child_exit`` hook: a dead worker's live gauges stop counting (its counters
    and histograms stay in the sums, as Prometheus expects of counters)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def on_exit(server: Any) -> None:
    """gunicorn ``on_exit`` hook: remove the directory :func:`prepare_directory` created."""
    while _created:
        shutil.rmtree(_created.pop(), ignore_errors=True)
