"""Reading and adding many subscribers at once (an import's chunk): in one statement each with a
store that offers :class:`SubscriberBatches` (the built-in one does), else one subscriber at a
time through :class:`~.host.SubscriberRepository`, with the same result. A host's store need
not offer it (docs/storage.md, `SubscriberBatches`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .host import SubscriberRepository
from .records import SubscriberData, SubscriberRecord


@runtime_checkable
class SubscriberBatches(Protocol):
    """What a subscriber store may add to :class:`~.host.SubscriberRepository` to take
    hundreds of subscribers per statement."""

    def get_many_by_email(
        self, emails: Sequence[str], *, lock: bool = False
    ) -> dict[str, SubscriberRecord]:
        """The subscribers with these (normalised) addresses, by address; an address without
        one is left out. ``lock`` as for ``get_by_email``."""

    def add_many(self, data: Sequence[SubscriberData]) -> set[str]:
        """Store each new subscriber of ``data`` (distinct addresses) as ``add`` would; the
        addresses stored (one already taken, also by a concurrent transaction, is not)."""


def subscribers_by_email(
    repository: SubscriberRepository, emails: Sequence[str], *, lock: bool = False
) -> dict[str, SubscriberRecord]:
    """:meth:`SubscriberBatches.get_many_by_email` of ``repository``, or its answer from
    ``get_by_email`` one address at a time."""
    if isinstance(repository, SubscriberBatches):
        return repository.get_many_by_email(emails, lock=lock)
    found = {}
    for email in emails:
        record = repository.get_by_email(email, lock=lock)
        if record is not None:
            found[email] = record
    return found


def add_subscribers(repository: SubscriberRepository, data: Sequence[SubscriberData]) -> set[str]:
    """:meth:`SubscriberBatches.add_many` of ``repository``, or its answer from ``add`` one
    subscriber at a time."""
    if isinstance(repository, SubscriberBatches):
        return repository.add_many(data)
    return {item.email for item in data if repository.add(item) is not None}
