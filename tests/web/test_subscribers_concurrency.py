"""Subscriber walks and signups under concurrency, on whichever database the suite runs on.

- signups while a client walks the list by cursor: no subscriber repeated, none skipped;
- the same address POSTed at once by several clients: one subscriber;
- erasures racing each other and new signups: every erased address's events are discarded.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import falcon.testing
import pytest

from newsletter_connector.service.events import subscriber_key
from tests.support.subscriber_helpers import SUBSCRIBERS, outbox, post, walk_all_emails

pytestmark = pytest.mark.system  # signups from threads during a walk


def test_signups_during_a_cursor_walk_neither_repeat_nor_skip(
    newsletter_service: Any, newsletter_client: Any, auth: dict[str, str]
) -> None:
    initial = [f"before{i:03d}@example.org" for i in range(120)]
    for email in initial:
        newsletter_service.subscribers.subscribe({"email": email})
    stop = threading.Event()

    def sign_up(worker: int) -> int:
        count = 0
        while not stop.is_set() and count < 60:
            newsletter_service.subscribers.subscribe(
                {"email": f"during{worker}-{count}@example.org"}
            )
            count += 1
        return count

    seen: list[str] = []
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(sign_up, worker) for worker in range(3)]
        cursor = None
        while True:
            params: dict[str, Any] = {"limit": 4}
            if cursor:
                params["cursor"] = cursor
            result = newsletter_client.simulate_get(SUBSCRIBERS, headers=auth, params=params)
            assert result.status_code == 200
            seen += [contact["email"] for contact in result.json["data"]]
            cursor = result.json["next_cursor"]
            if cursor is None:
                break
            time.sleep(0.001)
        stop.set()
        added = sum(f.result() for f in futures)
    assert added > 0
    assert len(seen) == len(set(seen)), "a subscriber was returned twice"
    assert set(initial) <= set(seen), "a subscriber that existed before the walk was skipped"
    # Nothing committed concurrently was skipped either: what the walk saw is exactly the
    # start of the list in creation order.
    everyone = walk_all_emails(newsletter_service)
    assert len(everyone) == len(initial) + added
    assert seen == everyone[: len(seen)]


def test_concurrent_duplicate_posts_make_one_subscriber(
    newsletter_app: Any, auth: dict[str, str], newsletter_service: Any
) -> None:
    spellings = ["dup@example.org", "DUP@example.org", "Dup@Example.org", " dup@example.ORG "]
    barrier = threading.Barrier(8)

    def attempt(index: int) -> Any:
        client = falcon.testing.TestClient(newsletter_app)
        barrier.wait()
        return post(client, auth, {"email": spellings[index % len(spellings)], "zip": "12345"})

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(attempt, range(8)))
    statuses = sorted(result.status_code for result in results)
    assert statuses == [200] * 7 + [201]
    assert len({result.json["unsubscribe_url"] for result in results}) == 1
    assert walk_all_emails(newsletter_service) == ["dup@example.org"]


def test_concurrent_erasures_discard_every_queued_event_of_their_addresses(
    newsletter_service: Any, newsletter_client: Any, auth: dict[str, str]
) -> None:
    doomed = [f"erase{i}@example.org" for i in range(8)]
    for email in doomed:
        newsletter_service.subscribers.subscribe({"email": email})
        newsletter_service.subscribers.unsubscribe(email)
        newsletter_service.messages.record(email, None, "bye")
    barrier = threading.Barrier(len(doomed) + 2)

    def erase(email: str) -> Any:
        client = falcon.testing.TestClient(newsletter_client.app)
        barrier.wait()
        return client.simulate_delete(f"{SUBSCRIBERS}/{email.replace('@', '%40')}", headers=auth)

    def newcomer(index: int) -> None:
        barrier.wait()
        for n in range(5):
            newsletter_service.subscribers.subscribe({"email": f"new{index}-{n}@example.org"})

    with ThreadPoolExecutor(max_workers=len(doomed) + 2) as pool:
        erased = [pool.submit(erase, email) for email in doomed]
        newcomers = [pool.submit(newcomer, i) for i in range(2)]
        results = [f.result() for f in erased]
        for f in newcomers:
            f.result()
    assert all(r.status_code == 200 for r in results)
    keys = {subscriber_key(newsletter_service.context, email) for email in doomed}
    remaining = outbox(newsletter_service)
    assert not [event for event in remaining if event["subscriber_key"] in keys]
    assert len(remaining) == 10  # the newcomers' signups
    for email in doomed:
        [evidence] = newsletter_service.subscribers.erasure_evidence(email)
        assert evidence.previous_status == "unsubscribed" and evidence.discarded_events == 3
