"""The built-in store's issues in creation order, as the list-source surface pages them."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from tests.plugins.sql_store.test_sql_issues import new_issue

T0 = datetime(2026, 3, 4, 5, 6, 7)


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def _store(storage: Any, created_at: datetime, kind: str = "daily", subject: str = "Issue") -> int:
    """Record an issue through ``uow.issues``; return its id."""
    with storage.transaction() as uow:
        record = uow.issues.add(replace(new_issue(kind=kind, at=created_at), subject=subject))
    assert record is not None
    return int(record.id)


def _listed_ids(uow: Any, *, descending: bool, offset: int = 0, limit: int = 10) -> list[int]:
    listed = uow.issues.list_by_creation(descending=descending, offset=offset, limit=limit)
    return [r.id for r in listed]


class TestSqlIssueOrder:
    """``SqlIssues`` in creation order, as the list-source surface pages them."""

    def test_issues_get_returns_the_stored_issue(self, storage: Any) -> None:
        issue_id = _store(storage, T0, kind="weekly", subject="Week in review")
        with storage.transaction(write=False) as uow:
            record = uow.issues.get(issue_id)
            assert uow.issues.get(issue_id + 1000) is None
        assert record is not None
        assert record.id == issue_id
        assert record.kind == "weekly" and record.subject == "Week in review"
        assert record.created_at == T0 and record.html
        assert len(record.uuid) == 36

    def test_issues_order_breaks_created_at_ties_by_id(self, storage: Any) -> None:
        later = _store(storage, T0 + timedelta(hours=1))
        tie_a = _store(storage, T0)
        tie_b = _store(storage, T0)
        with storage.transaction(write=False) as uow:
            ascending = _listed_ids(uow, descending=False)
            descending = _listed_ids(uow, descending=True)
        assert ascending == [tie_a, tie_b, later]
        assert descending == [later, tie_b, tie_a]

    def test_issues_pages_cover_everything_once(self, storage: Any) -> None:
        ids = [_store(storage, T0 + timedelta(minutes=n // 3)) for n in range(11)]
        for descending in (False, True):
            seen: list[int] = []
            with storage.transaction(write=False) as uow:
                assert uow.issues.count() == 11
                for offset in range(0, 12, 4):
                    seen += _listed_ids(uow, descending=descending, offset=offset, limit=4)
            assert seen == (list(reversed(ids)) if descending else ids)
