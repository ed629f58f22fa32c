"""Subscribers in batches: the built-in store reads and adds a chunk per statement (on
PostgreSQL with ``COPY``, falling back to a staged insert when an address is already taken),
and a store without batches gives the same answers one subscriber at a time."""

from __future__ import annotations

from typing import Any

from newsletter_connector.storage.subscriber_batches import (
    SubscriberBatches,
    add_subscribers,
    subscribers_by_email,
)
from newsletter_connector.testing.subscriber_samples import make_subscriber_data


class OneAtATime:
    """A subscriber repository offering only the contract's single-subscriber members."""

    def __init__(self, repository: Any) -> None:
        self.get_by_email = repository.get_by_email
        self.add = repository.add


def _emails(newsletter_storage: Any) -> list[str]:
    with newsletter_storage.transaction(write=False) as uow:
        return sorted(
            r.email for r in uow.subscribers.list_page(status=None, after_id=None, limit=50)
        )


def test_the_builtin_store_adds_a_chunk_and_skips_taken_addresses(newsletter_storage: Any) -> None:
    with newsletter_storage.transaction() as uow:
        assert isinstance(uow.subscribers, SubscriberBatches)
        uow.subscribers.add(make_subscriber_data("taken@example.org", first_name="Kept"))
    new = [make_subscriber_data(f"new{n}@example.org") for n in range(3)]
    taken = make_subscriber_data("taken@example.org", first_name="Replaced")
    with newsletter_storage.transaction() as uow:
        added = add_subscribers(uow.subscribers, [new[0], taken, *new[1:]])
    assert added == {"new0@example.org", "new1@example.org", "new2@example.org"}
    assert _emails(newsletter_storage) == sorted([*added, "taken@example.org"])
    with newsletter_storage.transaction(write=False) as uow:
        found = subscribers_by_email(uow.subscribers, ["taken@example.org", "none@example.org"])
    assert list(found) == ["taken@example.org"]
    assert found["taken@example.org"].first_name == "Kept"
    with newsletter_storage.transaction() as uow:
        assert add_subscribers(uow.subscribers, []) == set()
        assert subscribers_by_email(uow.subscribers, [], lock=True) == {}


def test_a_store_without_batches_gives_the_same_answers(newsletter_storage: Any) -> None:
    with newsletter_storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data("taken@example.org"))
    with newsletter_storage.transaction() as uow:
        single = OneAtATime(uow.subscribers)
        assert not isinstance(single, SubscriberBatches)
        added = add_subscribers(
            single,  # type: ignore[arg-type]
            [make_subscriber_data("a@example.org"), make_subscriber_data("taken@example.org")],
        )
        found = subscribers_by_email(single, ["a@example.org", "b@example.org"], lock=True)  # type: ignore[arg-type]
    assert added == {"a@example.org"} and list(found) == ["a@example.org"]
