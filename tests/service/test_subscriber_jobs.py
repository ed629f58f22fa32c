"""Bulk jobs: every subscriber matching the filter when the job was asked for gets the single
act (and its events) exactly once, a chunk per transaction under the job's lease; a runner
that lost its lease or whose job was stopped commits nothing."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from newsletter_connector.errors import InvalidRequest, NotFound
from newsletter_connector.service import jobs, subscriber_jobs, subscriber_list
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.storage.subscriber_query import SubscriberFilter
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.analytics_helpers import clocked_service

NOW = datetime(2026, 11, 20, 9, 0, 0)
BOUNCED_021 = SubscriberFilter(status="bounced", zip_prefix="021")
#: More than two chunks match; the others differ by status or ZIP.
MATCHING = 2 * subscriber_jobs.CHUNK + 17


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW)


@pytest.fixture
def people(clocked: Any) -> list[str]:
    service, _clock = clocked
    matching = []
    with service.storage.transaction() as uow:
        for n in range(MATCHING + 60):
            email = f"reader{n:04d}@example.org"
            status, zip_code = ("bounced", "02134") if n < MATCHING else ("confirmed", "02134")
            if n >= MATCHING + 30:
                status, zip_code = "bounced", "10001"
            at = NOW - timedelta(days=30) + timedelta(minutes=n)
            uow.subscribers.add(
                make_subscriber_data(
                    email, status=status, zip=zip_code, created_at=at, updated_at=at
                )
            )
            if n < MATCHING:
                matching.append(email)
    return matching


def _status(service: Any, email: str) -> str | None:
    with service.storage.transaction(write=False) as uow:
        record = uow.subscribers.get_by_email(email)
    return None if record is None else record.status


def _events(service: Any, email: str) -> list[str]:
    with service.storage.transaction(write=False) as uow:
        about = uow.outbox.events_about(subscriber_key(service.context, email), limit=20)
    return [event.event_type for event in about]


def _start(service: Any, act: str = "unsubscribe") -> Any:
    return service.subscriber_jobs.start(
        act,
        BOUNCED_021,
        filter_text="status=bounced&zip=021",
        requested_by="ada",
        expected=MATCHING,
        expected_exact=True,
    )


def test_a_job_unsubscribes_every_match_once_with_the_single_acts_events(
    clocked: Any, people: list[str]
) -> None:
    service, clock = clocked
    job = _start(service)
    # a later signup that matches is not the job's business
    clock.now = NOW + timedelta(seconds=1)
    service.subscribers.subscribe({"email": "late@example.org", "zip": "02134"})
    service.subscribers.mark_bounced("late@example.org")
    assert service.subscriber_jobs.work() == MATCHING
    done = service.subscriber_jobs.get(job.id)
    assert (done.changed, done.unchanged, done.missing) == (MATCHING, 0, 0)
    assert done.finished_at == clock.now and done.started_at == clock.now
    assert {_status(service, email) for email in people} == {"unsubscribed"}
    assert _events(service, people[0]) == ["newsletter.unsubscribed"]
    assert _status(service, f"reader{MATCHING:04d}@example.org") == "confirmed"
    assert _status(service, f"reader{MATCHING + 30:04d}@example.org") == "bounced"
    assert _status(service, "late@example.org") == "bounced"
    # nothing left to do: another loop does nothing
    assert service.subscriber_jobs.work() == 0


def test_a_job_counts_what_was_already_so_and_what_is_gone(clocked: Any, people: list[str]) -> None:
    service, _clock = clocked
    job = _start(service, "bounce")
    service.subscribers.unsubscribe(people[5])
    assert service.subscriber_jobs.work() == MATCHING - 1  # unsubscribed: no longer matches
    done = service.subscriber_jobs.get(job.id)
    # bounced already: each unchanged, and no event queued
    assert (done.changed, done.unchanged, done.missing) == (0, MATCHING - 1, 0)
    assert _events(service, people[0]) == []


def test_erasing_every_match_leaves_the_deletion_records(clocked: Any, people: list[str]) -> None:
    service, _clock = clocked
    job = _start(service, "erase")
    service.subscriber_jobs.work()
    assert service.subscriber_jobs.get(job.id).changed == MATCHING
    assert {_status(service, email) for email in people} == {None}
    assert len(service.subscribers.erasure_evidence(people[0])) == 1


def test_a_slice_ends_between_chunks_and_the_next_loop_goes_on(
    clocked: Any, people: list[str]
) -> None:
    service, _clock = clocked
    job = _start(service)
    first = service.subscriber_jobs.work(seconds=0)
    assert first == subscriber_jobs.CHUNK  # one chunk, then the slice has ended
    assert service.subscriber_jobs.get(job.id).done == subscriber_jobs.CHUNK
    assert service.subscriber_jobs.work() == MATCHING - first
    assert service.subscriber_jobs.get(job.id).finished_at is not None


def test_a_runner_whose_lease_passed_to_another_commits_nothing(
    clocked: Any, people: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, clock = clocked
    job = _start(service)
    with service.storage.transaction() as uow:
        stale = uow.bulk_jobs.claim(lease="stale", now=NOW, until=NOW + subscriber_jobs.LEASE)
    clock.now = NOW + 2 * subscriber_jobs.LEASE  # the stale runner's lease has ended
    with service.storage.transaction() as uow:
        uow.bulk_jobs.claim(lease="new", now=clock.now, until=clock.now + subscriber_jobs.LEASE)
    with pytest.raises(jobs.LeaseLost):
        service.subscriber_jobs._chunk(stale, stale.position, "stale")
    assert {_status(service, email) for email in people} == {"bounced"}
    assert _events(service, people[-1]) == []
    assert service.subscriber_jobs.get(job.id).done == 0


def test_a_stopped_job_stops_between_chunks(clocked: Any, people: list[str]) -> None:
    service, _clock = clocked
    job = _start(service)
    service.subscriber_jobs.work(seconds=0)
    assert service.subscriber_jobs.stop(job.id, by="bob") is True
    assert service.subscriber_jobs.work() == 0
    stopped = service.subscriber_jobs.get(job.id)
    assert stopped.stopped_by == "bob" and stopped.done == subscriber_jobs.CHUNK
    assert sum(_status(service, email) == "unsubscribed" for email in people) == stopped.done
    assert service.subscriber_jobs.stop(job.id, by="bob") is False


def test_an_unknown_act_or_job_is_refused(clocked: Any) -> None:
    service, _clock = clocked
    with pytest.raises(InvalidRequest) as caught:
        _start(service, "delete")
    assert caught.value.field == "act"
    with pytest.raises(NotFound):
        service.subscriber_jobs.get(12345)


def test_a_walk_of_the_matches_pages_through_them_all_newest_first(
    clocked: Any, people: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, _clock = clocked
    # Pages of 7, each examining at most 40: the walk goes on where a page stopped searching.
    monkeypatch.setattr(subscriber_list, "WALK_PAGE", 7)
    monkeypatch.setattr(subscriber_list, "BUDGET", 40)
    walked = [record.email for record in service.subscriber_list.walk(BOUNCED_021)]
    assert walked == list(reversed(people))
    nobody = SubscriberFilter(zip_prefix="999")
    assert list(service.subscriber_list.walk(nobody)) == []
