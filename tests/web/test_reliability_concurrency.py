"""Reliability, concurrency: a cursor walk of ``GET /subscribers`` while several
writers sign up thousands of addresses never repeats a subscriber and never skips one.

Four writer threads (each its own database connection: SQLite writers take turns through
``BEGIN IMMEDIATE``, PostgreSQL ones through the signup lock) sign up 2,000 addresses
(10,000 in the ``--run-slow`` variant) while a client walks the list page by page through the
WSGI app. Two runners never sending one batch at once is proven in ``test_sync_cli.py`` and
``test_sync_runner.py`` (both databases).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support.subscriber_helpers import SUBSCRIBERS, walk_all_emails

pytestmark = pytest.mark.system  # thousands of signups from threads

WRITERS = 4


def walk_while_writing(
    service: Any, client: Any, auth: dict[str, str], existing: int, per_writer: int
) -> None:
    initial = [f"before{i:05d}@example.org" for i in range(existing)]
    for email in initial:
        service.subscribers.subscribe({"email": email})
    started = threading.Barrier(WRITERS + 1)
    written: list[int] = []

    def sign_up(writer: int) -> None:
        started.wait()
        for n in range(per_writer):
            result = service.subscribers.subscribe({"email": f"w{writer}-{n:05d}@example.org"})
            assert result.created
        written.append(writer)

    seen: list[str] = []
    pages_during_writes = 0
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        futures = [pool.submit(sign_up, writer) for writer in range(WRITERS)]
        started.wait()
        cursor = None
        while True:
            params: dict[str, Any] = {"limit": 20}
            if cursor:
                params["cursor"] = cursor
            result = client.simulate_get(SUBSCRIBERS, headers=auth, params=params)
            assert result.status_code == 200
            seen += [contact["email"] for contact in result.json["data"]]
            pages_during_writes += len(written) < WRITERS
            cursor = result.json["next_cursor"]
            if cursor is None:
                break
            time.sleep(0.002)
        for future in futures:
            future.result()
    assert pages_during_writes > 10, "the walk did not overlap the writes"
    assert len(seen) == len(set(seen)), "a subscriber was returned twice"
    assert set(initial) <= set(seen), "a subscriber that existed before the walk was skipped"
    final = walk_all_emails(service)
    assert len(final) == existing + WRITERS * per_writer
    # Nothing committed during the walk was skipped either: the walk saw exactly the start of
    # the list in creation order (everything committed before it passed that point).
    assert seen == final[: len(seen)]


def test_a_cursor_walk_during_thousands_of_signups_neither_repeats_nor_skips(
    newsletter_service: Any, newsletter_client: Any, auth: dict[str, str]
) -> None:
    walk_while_writing(newsletter_service, newsletter_client, auth, existing=300, per_writer=500)


@pytest.mark.slow
def test_a_cursor_walk_during_ten_thousand_signups_neither_repeats_nor_skips(
    newsletter_service: Any, newsletter_client: Any, auth: dict[str, str]
) -> None:
    walk_while_writing(newsletter_service, newsletter_client, auth, existing=1000, per_writer=2500)
