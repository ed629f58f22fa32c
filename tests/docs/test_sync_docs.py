"""The runnable examples of docs/delivery.md: the background runner, alone and per gunicorn
worker, each block run standalone with the ``NEWSLETTER_*`` variables naming the test
database."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.docblocks import run_block, settings_environment


@pytest.fixture
def environment(
    newsletter_settings: Any, newsletter_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_environment(monkeypatch, newsletter_settings)


def test_background_sync_example_runs(environment: None) -> None:
    namespace = run_block("delivery-background-sync")
    try:
        assert not namespace["sync"].running
    finally:
        namespace["service"].close()


def test_gunicorn_conf_starts_and_stops_a_runner_per_worker(environment: None) -> None:
    conf = run_block("delivery-gunicorn-conf")
    worker = SimpleNamespace()
    conf["post_worker_init"](worker)
    sync = worker.newsletter_sync
    try:
        assert sync.running
    finally:
        conf["worker_exit"](None, worker)
        sync.runner.service.close()
    assert not sync.running
    conf["worker_exit"](None, SimpleNamespace())  # a worker that never started one
