"""Conformance of the ``campaigns`` repository (list-source reads of stored issues).

Only the :class:`~newsletter_connector.storage.Storage` protocol is used to read. The suite
needs stored issues and subscribers, which other repositories write; until those are part of
the protocol the backend's test provides two fixtures that store them:

- ``store_issue(created_at=datetime, kind="daily", subject=None) -> int`` (the new id);
- ``store_subscriber(status=str) -> None``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

T0 = datetime(2026, 3, 4, 5, 6, 7)


class CampaignConformance:
    """Mixin: subclass with ``storage``, ``store_issue`` and ``store_subscriber`` fixtures."""

    @pytest.fixture
    def store_issue(self) -> Callable[..., int]:  # pragma: no cover - always overridden
        raise NotImplementedError("provide a `store_issue` fixture for your backend")

    @pytest.fixture
    def store_subscriber(self) -> Callable[..., None]:  # pragma: no cover - always overridden
        raise NotImplementedError("provide a `store_subscriber` fixture for your backend")

    def test_campaigns_empty_store(self, storage: Any) -> None:
        with storage.transaction(write=False) as uow:
            assert uow.campaigns.count() == 0
            assert uow.campaigns.page(descending=True, offset=0, limit=10) == []
            assert uow.campaigns.get(1) is None
            assert uow.campaigns.confirmed_subscriber_count() == 0

    def test_campaigns_get_returns_the_stored_issue(
        self, storage: Any, store_issue: Callable[..., int]
    ) -> None:
        issue_id = store_issue(created_at=T0, kind="weekly", subject="Week in review")
        with storage.transaction(write=False) as uow:
            record = uow.campaigns.get(issue_id)
            assert uow.campaigns.get(issue_id + 1000) is None
        assert record is not None
        assert record.id == issue_id
        assert record.kind == "weekly" and record.subject == "Week in review"
        assert record.created_at == T0 and record.html
        assert len(record.uuid) == 36

    def test_campaigns_order_breaks_created_at_ties_by_id(
        self, storage: Any, store_issue: Callable[..., int]
    ) -> None:
        later = store_issue(created_at=T0 + timedelta(hours=1))
        tie_a = store_issue(created_at=T0)
        tie_b = store_issue(created_at=T0)
        with storage.transaction(write=False) as uow:
            ascending = [r.id for r in uow.campaigns.page(descending=False, offset=0, limit=10)]
            descending = [r.id for r in uow.campaigns.page(descending=True, offset=0, limit=10)]
        assert ascending == [tie_a, tie_b, later]
        assert descending == [later, tie_b, tie_a]

    def test_campaigns_pages_cover_everything_once(
        self, storage: Any, store_issue: Callable[..., int]
    ) -> None:
        ids = [store_issue(created_at=T0 + timedelta(minutes=n // 3)) for n in range(11)]
        for descending in (False, True):
            seen: list[int] = []
            with storage.transaction(write=False) as uow:
                assert uow.campaigns.count() == 11
                for offset in range(0, 12, 4):
                    seen += [
                        r.id
                        for r in uow.campaigns.page(descending=descending, offset=offset, limit=4)
                    ]
            assert seen == (list(reversed(ids)) if descending else ids)

    def test_confirmed_subscriber_count_counts_confirmed_only(
        self, storage: Any, store_subscriber: Callable[..., None]
    ) -> None:
        for status in ("confirmed", "confirmed", "pending", "unsubscribed", "bounced"):
            store_subscriber(status=status)
        with storage.transaction(write=False) as uow:
            assert uow.campaigns.confirmed_subscriber_count() == 2
