"""Conformance of the issues repository's reads by id and in creation order (what the
list-source surface serves as listmonk campaigns). Only the
:class:`~newsletter_connector.storage.Storage` protocol is used.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from ..storage import NewIssue

T0 = datetime(2026, 3, 4, 5, 6, 7)


class IssueOrderConformance:
    """Mixin: needs only a ``storage`` fixture yielding an empty, ready backend."""

    @pytest.fixture
    def store_issue(self, storage: Any) -> Callable[..., int]:
        """Record an issue through ``uow.issues``; return its id."""

        def store(*, created_at: datetime, kind: str = "daily", subject: str | None = None) -> int:
            issue = NewIssue(
                uuid=str(uuid.uuid4()),
                kind=kind,
                cadence=kind,
                issue_date=created_at.date().isoformat(),
                subject=subject or f"Issue of {created_at.isoformat()}",
                site_url="https://news.example.test",
                postal_address=None,
                sections={},
                html="<p>issue {{unsubscribe_url}}</p>",
                text="issue",
                period_key=None,
                created_at=created_at,
            )
            with storage.transaction() as uow:
                record = uow.issues.add(issue)
            assert record is not None
            return int(record.id)

        return store

    def test_issues_empty_store(self, storage: Any) -> None:
        with storage.transaction(write=False) as uow:
            assert uow.issues.count() == 0
            assert uow.issues.list_by_creation(descending=True, offset=0, limit=10) == []
            assert uow.issues.get(1) is None

    def test_issues_get_returns_the_stored_issue(
        self, storage: Any, store_issue: Callable[..., int]
    ) -> None:
        issue_id = store_issue(created_at=T0, kind="weekly", subject="Week in review")
        with storage.transaction(write=False) as uow:
            record = uow.issues.get(issue_id)
            assert uow.issues.get(issue_id + 1000) is None
        assert record is not None
        assert record.id == issue_id
        assert record.kind == "weekly" and record.subject == "Week in review"
        assert record.created_at == T0 and record.html
        assert len(record.uuid) == 36

    def test_issues_order_breaks_created_at_ties_by_id(
        self, storage: Any, store_issue: Callable[..., int]
    ) -> None:
        later = store_issue(created_at=T0 + timedelta(hours=1))
        tie_a = store_issue(created_at=T0)
        tie_b = store_issue(created_at=T0)
        with storage.transaction(write=False) as uow:
            ascending = [
                r.id for r in uow.issues.list_by_creation(descending=False, offset=0, limit=10)
            ]
            descending = [
                r.id for r in uow.issues.list_by_creation(descending=True, offset=0, limit=10)
            ]
        assert ascending == [tie_a, tie_b, later]
        assert descending == [later, tie_b, tie_a]

    def test_issues_pages_cover_everything_once(
        self, storage: Any, store_issue: Callable[..., int]
    ) -> None:
        ids = [store_issue(created_at=T0 + timedelta(minutes=n // 3)) for n in range(11)]
        for descending in (False, True):
            seen: list[int] = []
            with storage.transaction(write=False) as uow:
                assert uow.issues.count() == 11
                for offset in range(0, 12, 4):
                    seen += [
                        r.id
                        for r in uow.issues.list_by_creation(
                            descending=descending, offset=offset, limit=4
                        )
                    ]
            assert seen == (list(reversed(ids)) if descending else ids)
