"""The built-in store's recorded issues."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.storage.records import NewIssue
from newsletter_connector.testing.issue_samples import sample_issue_content

T0 = datetime(2026, 11, 21, 10, 0, 0)

SECTIONS = sample_issue_content(puzzle_hint="")  # an empty string round-trips too


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def new_issue(
    *, kind: str = "manual", period_key: str | None = None, at: datetime = T0, html: str = "<p>"
) -> NewIssue:

    return NewIssue(
        uuid=str(uuid.uuid4()),
        kind=kind,
        cadence=kind,
        issue_date=at.date().isoformat(),
        subject=f"{kind} {at.isoformat()}",
        site_url="https://e.example",
        postal_address="1 Main St\nTown",
        sections=SECTIONS,
        html=html + "{{unsubscribe_url}}",
        text="text {{unsubscribe_url}}",
        period_key=period_key,
        created_at=at,
    )


class TestSqlIssues:
    """``SqlIssues``: its records and keyset."""

    def test_issues_add_returns_the_stored_issue(self, storage: Any) -> None:
        issue = new_issue(kind="daily", period_key="daily:2026-11-21")
        with storage.transaction() as uow:
            record = uow.issues.add(issue)
        assert record is not None and isinstance(record.id, int)
        with storage.transaction(write=False) as uow:
            latest = uow.issues.latest()
        assert latest == record
        assert latest.sections == SECTIONS  # nested JSON round-trips
        assert latest.html == issue.html and latest.text == issue.text
        assert latest.postal_address == "1 Main St\nTown"
        assert latest.created_at == T0 and latest.updated_at == T0
        assert latest.uuid == issue.uuid and latest.kind == "daily"
        assert latest.period_key == "daily:2026-11-21"

    def test_issues_period_key_records_once(self, storage: Any) -> None:
        with storage.transaction() as uow:
            first = uow.issues.add(new_issue(kind="daily", period_key="daily:2026-11-21"))
        with storage.transaction() as uow:
            again = uow.issues.add(new_issue(kind="daily", period_key="daily:2026-11-21"))
            assert again is None
            # The transaction stays usable after the refused insert.
            other = uow.issues.add(new_issue(kind="daily", period_key="daily:2026-11-22"))
            assert other is not None
        with storage.transaction(write=False) as uow:
            assert len(uow.issues.list_recent(10, include_bodies=False)) == 2
            found = uow.issues.find_by_period("daily:2026-11-21")
        assert first is not None and found is not None and found.id == first.id

    def test_issues_racing_inserts_of_a_period_record_once(self, storage: Any) -> None:
        """A second transaction adding the same period while the first is still open gets
        ``None`` once the first commits (it must wait or retry, never record twice)."""
        outcome: dict[str, Any] = {}
        started = threading.Event()

        def second_runner() -> None:
            started.set()
            try:
                with storage.transaction() as uow:
                    outcome["second"] = uow.issues.add(
                        new_issue(kind="weekly", period_key="weekly:2026-W47")
                    )
            except BaseException as exc:  # pragma: no cover - reported by the assert below
                outcome["error"] = exc

        with storage.transaction() as uow:
            first = uow.issues.add(new_issue(kind="weekly", period_key="weekly:2026-W47"))
            thread = threading.Thread(target=second_runner)
            thread.start()
            started.wait(10)
            time.sleep(0.3)  # let the second transaction reach its insert
        thread.join(30)
        assert "error" not in outcome, outcome.get("error")
        assert first is not None and outcome["second"] is None
        with storage.transaction(write=False) as uow:
            assert len(uow.issues.list_recent(10, include_bodies=False)) == 1

    def test_issues_without_period_key_are_unlimited(self, storage: Any) -> None:
        with storage.transaction() as uow:
            for _ in range(3):
                assert uow.issues.add(new_issue(kind="test")) is not None
        with storage.transaction(write=False) as uow:
            assert len(uow.issues.list_recent(10, include_bodies=False)) == 3

    def test_issues_list_newest_first_with_limit(self, storage: Any) -> None:
        ids = []
        with storage.transaction() as uow:
            for n in range(5):
                # Recording order wins over created_at: a back-dated clock does not reorder.
                record = uow.issues.add(new_issue(at=T0 - timedelta(minutes=n)))
                assert record is not None
                ids.append(record.id)
        with storage.transaction(write=False) as uow:
            listed = uow.issues.list_recent(3, include_bodies=False)
            latest = uow.issues.latest()
            older = uow.issues.list_recent(3, include_bodies=False, before_id=listed[-1].id)
        assert [r.id for r in listed] == list(reversed(ids))[:3]
        assert latest is not None and latest.id == ids[-1]
        assert [r.id for r in older] == list(reversed(ids))[3:]  # the next page, by keyset

    def test_issues_list_without_bodies_leaves_them_out(self, storage: Any) -> None:
        with storage.transaction() as uow:
            uow.issues.add(new_issue(html="<p>body"))
        with storage.transaction(write=False) as uow:
            (light,) = uow.issues.list_recent(10, include_bodies=False)
            (full,) = uow.issues.list_recent(10, include_bodies=True)
        assert light.html is None and light.text is None
        assert light.sections == SECTIONS and light.subject == full.subject
        assert full.html == "<p>body{{unsubscribe_url}}"

    def test_issues_add_rolls_back_with_its_transaction(self, storage: Any) -> None:
        with pytest.raises(RuntimeError), storage.transaction() as uow:
            uow.issues.add(new_issue(kind="daily", period_key="daily:2026-11-23"))
            raise RuntimeError("the event could not be queued")
        with storage.transaction(write=False) as uow:
            assert uow.issues.latest() is None
            assert uow.issues.find_by_period("daily:2026-11-23") is None
