"""The built-in store's bulk jobs: claimed, advanced and stopped under a lease."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.storage.bulk_jobs import BulkJobProgress, NewBulkJob
from newsletter_connector.storage.subscriber_query import SubscriberFilter

T0 = datetime(2026, 3, 4, 5, 6, 7, 890123)
MINUTE = timedelta(minutes=1)
FILTER = SubscriberFilter(
    status="bounced",
    prefs=(("daily_briefing", "off"),),
    zip_prefix="12",
    signed_up_from=datetime(2026, 1, 1),
    sms=False,
)


@pytest.fixture
def storage(newsletter_storage: BuiltinSqlStorage) -> BuiltinSqlStorage:
    """The built-in store on the run's database (SQLite, or PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` names one), emptied after each test."""
    return newsletter_storage


def _job(act: str = "unsubscribe", at: datetime = T0) -> NewBulkJob:
    return NewBulkJob(
        act=act,
        filter=FILTER,
        filter_text="status=bounced&zip=12",
        requested_by="ada",
        requested_at=at,
        expected=1234,
        expected_exact=False,
    )


def _progress(n: int, *, finished: bool = False) -> BulkJobProgress:
    return BulkJobProgress(
        position=(T0 - n * MINUTE, 100 - n), changed=n, unchanged=1, missing=0, finished=finished
    )


class TestSqlBulkJobs:
    """The bulk jobs repository."""

    def test_a_new_job_starts_at_its_request_and_keeps_its_filter(self, storage: Any) -> None:
        with storage.transaction() as uow:
            first = uow.bulk_jobs.add(_job())
            second = uow.bulk_jobs.add(_job("erase"))
        assert second.id > first.id
        assert first.filter == FILTER
        assert first.position[0] == T0 and first.position[1] >= 2**62
        assert (first.changed, first.unchanged, first.missing, first.done) == (0, 0, 0, 0)
        assert first.started_at is None and first.finished_at is None
        with storage.transaction(write=False) as uow:
            assert uow.bulk_jobs.get(first.id) == first
            assert uow.bulk_jobs.get(second.id + 1) is None
            assert [job.id for job in uow.bulk_jobs.recent(5)] == [second.id, first.id]
            assert [job.id for job in uow.bulk_jobs.recent(1)] == [second.id]

    def test_a_job_is_leased_to_one_runner_at_a_time(self, storage: Any) -> None:
        with storage.transaction() as uow:
            job = uow.bulk_jobs.add(_job())
            later = uow.bulk_jobs.add(_job("bounce"))
        with storage.transaction() as uow:
            claimed = uow.bulk_jobs.claim(lease="a", now=T0, until=T0 + MINUTE)
            assert claimed is not None and claimed.id == job.id  # the oldest first
            assert claimed.started_at == T0
            other = uow.bulk_jobs.claim(lease="b", now=T0, until=T0 + MINUTE)
            assert other is not None and other.id == later.id
            assert uow.bulk_jobs.claim(lease="c", now=T0, until=T0 + MINUTE) is None
            # a runner pausing between chunks lets the next claim take its job at once
            uow.bulk_jobs.release(later.id, lease="a")  # not its lease: kept
            uow.bulk_jobs.release(later.id, lease="b")
            again = uow.bulk_jobs.claim(lease="d", now=T0, until=T0 + MINUTE)
            assert again is not None and again.id == later.id
            assert uow.bulk_jobs.claim(lease="e", now=T0, until=T0 + MINUTE) is None
        # the lease ends: another runner takes the job where it stands
        after = T0 + 2 * MINUTE
        with storage.transaction() as uow:
            taken = uow.bulk_jobs.claim(lease="c", now=after, until=after + MINUTE)
            assert taken is not None and taken.id == job.id
            assert taken.started_at == T0  # its first claim's

    def test_progress_counts_only_under_the_lease(self, storage: Any) -> None:
        with storage.transaction() as uow:
            job = uow.bulk_jobs.add(_job())
            uow.bulk_jobs.claim(lease="a", now=T0, until=T0 + MINUTE)
            assert uow.bulk_jobs.advance(job.id, _progress(3), lease="a", now=T0, until=T0)
            assert not uow.bulk_jobs.advance(job.id, _progress(9), lease="b", now=T0, until=T0)
            assert uow.bulk_jobs.advance(job.id, _progress(2), lease="a", now=T0, until=T0)
        with storage.transaction(write=False) as uow:
            now = uow.bulk_jobs.get(job.id)
        assert (now.changed, now.unchanged, now.missing) == (5, 2, 0)
        assert now.position == _progress(2).position
        assert now.finished_at is None
        finish = T0 + MINUTE
        with storage.transaction() as uow:
            # the lease set "until" T0: ended, yet still the holder's until another claims
            assert uow.bulk_jobs.advance(
                job.id, _progress(1, finished=True), lease="a", now=finish, until=finish
            )
            assert not uow.bulk_jobs.advance(job.id, _progress(1), lease="a", now=T0, until=T0)
            assert uow.bulk_jobs.claim(lease="b", now=finish + MINUTE, until=finish) is None
        with storage.transaction(write=False) as uow:
            done = uow.bulk_jobs.get(job.id)
        assert done.finished_at == finish and done.changed == 6 and done.stopped_by is None
        assert done.filter == SubscriberFilter()  # what it matched is forgotten
        assert done.filter_text == "status=bounced&zip=12"

    def test_a_stopped_job_takes_no_more_progress(self, storage: Any) -> None:
        with storage.transaction() as uow:
            job = uow.bulk_jobs.add(_job("erase"))
            uow.bulk_jobs.claim(lease="a", now=T0, until=T0 + MINUTE)
        with storage.transaction() as uow:
            assert uow.bulk_jobs.stop(job.id, by="bob", at=T0 + MINUTE) is True
            assert uow.bulk_jobs.stop(job.id, by="bob", at=T0 + MINUTE) is False
            assert uow.bulk_jobs.stop(job.id + 1, by="bob", at=T0) is False
            assert not uow.bulk_jobs.advance(job.id, _progress(1), lease="a", now=T0, until=T0)
            assert uow.bulk_jobs.claim(lease="b", now=T0 + 9 * MINUTE, until=T0) is None
        with storage.transaction(write=False) as uow:
            stopped = uow.bulk_jobs.get(job.id)
        assert stopped.stopped_by == "bob" and stopped.finished_at == T0 + MINUTE
        assert stopped.done == 0 and stopped.filter == SubscriberFilter()
