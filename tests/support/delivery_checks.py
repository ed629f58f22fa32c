"""Checks shared by the fault tests: what a receiver got is every queued event, and any
repeat is a whole batch sent again with the same ids (at-least-once, never mixed or altered)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def assert_every_event_once_or_resent_whole(bodies: Sequence[Any], queued: Sequence[str]) -> int:
    """``bodies`` are the JSON arrays received, in arrival order; ``queued`` the event ids.

    Every queued id arrived; nothing else did; each request's id set is either new (disjoint
    from everything before it) or exactly a set sent before, with identical events. Returns
    how many requests were resends.
    """
    seen_batches: dict[frozenset[str], list[Any]] = {}
    seen_ids: set[str] = set()
    resends = 0
    for body in bodies:
        ids = frozenset(event["id"] for event in body)
        assert len(ids) == len(body), "a request carried the same event twice"
        if ids in seen_batches:
            assert body == seen_batches[ids], "a resent batch differs from its first sending"
            resends += 1
            continue
        assert not ids & seen_ids, "events were regrouped into a different batch"
        seen_batches[ids] = body
        seen_ids |= ids
    assert seen_ids == set(queued), (
        f"lost {len(set(queued) - seen_ids)}, unexpected {len(seen_ids - set(queued))}"
    )
    return resends
