"""The job registry: a kind of long work is a step function and words; the runner's one loop
claims the job asked for first among every kind's, runs its steps under one lease, and stops
between steps when the job is stopped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, select, update

from newsletter_connector.errors import NotFound
from newsletter_connector.plugins.sql_store import leases
from newsletter_connector.plugins.sql_store.jobs import JobTable
from newsletter_connector.service import jobs, subscriber_jobs
from newsletter_connector.service.jobs import JobKind, JobProgress, held
from newsletter_connector.storage.subscriber_query import SubscriberFilter
from newsletter_connector.testing.subscriber_samples import make_subscriber_data
from tests.support.analytics_helpers import clocked_service

NOW = datetime(2026, 11, 20, 9, 0, 0)

#: A toy kind's rows: the lease columns, and how many steps are left.
toys = Table(
    "test_toy_jobs",
    MetaData(),
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("requested_at", DateTime, nullable=False),
    Column("started_at", DateTime),
    Column("finished_at", DateTime),
    Column("stopped_by", String(200)),
    Column("lease", String(64)),
    Column("lease_until", DateTime),
    Column("left", Integer, nullable=False),
    Column("done", Integer, nullable=False),
)
_waiting = toys.c.finished_at.is_(None)


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    service, clock = clocked_service(newsletter_settings, newsletter_storage, NOW)
    toys.create(newsletter_storage.engine)
    yield service, clock
    toys.drop(newsletter_storage.engine)


def _register_toy(service: Any) -> list[tuple[int, int]]:
    """Register the kind ``toy``: each step counts one down and commits under the lease; the
    steps it took, as (job, left)."""
    taken: list[tuple[int, int]] = []

    def steps(job: dict[str, Any], lease: str) -> Iterator[int]:
        left = job["left"]
        while left:
            with service.storage.transaction() as uow:
                left -= 1
                values: dict[str, Any] = {"left": left, "done": toys.c.done + 1}
                if not left:
                    values["finished_at"] = service.context.clock()
                held(
                    leases.advance(
                        uow.connection,
                        toys,
                        job["id"],
                        _waiting,
                        lease=lease,
                        until=NOW + jobs.LEASE,
                        values=values,
                    )
                )
            taken.append((job["id"], left))
            yield 1

    def stop(uow: Any, job_id: int, *, by: str, at: datetime) -> bool:
        stopped = uow.connection.execute(
            update(toys).where(toys.c.id == job_id, _waiting).values(finished_at=at, stopped_by=by)
        )
        return bool(stopped.rowcount)

    def progress(job: dict[str, Any]) -> JobProgress:
        return JobProgress("Steps done", job["done"], job["done"], job["done"] + job["left"], True)

    service.jobs.register(
        JobKind(
            "toy",
            words="toy job",
            rows=JobTable(toys, _waiting, dict),
            steps=steps,
            stop=stop,
            progress=progress,
        )
    )
    return taken


def _add_toy(service: Any, left: int, *, asked: datetime = NOW) -> int:
    with service.storage.transaction() as uow:
        added = uow.connection.execute(
            toys.insert().values(requested_at=asked, left=left, done=0).returning(toys.c.id)
        )
        return int(added.scalar_one())


def _toy(service: Any, job_id: int) -> Any:
    with service.storage.transaction(write=False) as uow:
        return uow.connection.execute(select(toys).where(toys.c.id == job_id)).mappings().one()


def test_a_registered_kind_runs_through_the_runner_loop(clocked: Any) -> None:
    service, _clock = clocked
    taken = _register_toy(service)
    first, second = _add_toy(service, 3), _add_toy(service, 2)
    assert set(service.jobs.kinds) == {"bulk", "import", "toy"}
    assert service.jobs.work() == 5
    assert taken == [(first, 2), (first, 1), (first, 0), (second, 1), (second, 0)]
    row = _toy(service, first)
    assert row["done"] == 3 and row["started_at"] == NOW and row["lease"] is None
    assert service.jobs.kinds["toy"].progress(row).percent == 100
    assert service.jobs.work() == 0


def test_the_loop_takes_the_job_asked_for_first_of_any_kind(clocked: Any) -> None:
    service, _clock = clocked
    taken = _register_toy(service)
    with service.storage.transaction() as uow:
        uow.subscribers.add(make_subscriber_data("reader@example.org", status="bounced"))
    toy = _add_toy(service, 1, asked=NOW + timedelta(minutes=1))
    bulk = service.subscriber_jobs.start(
        "unsubscribe",
        SubscriberFilter(status="bounced"),
        filter_text="status=bounced",
        requested_by="ada",
        expected=1,
        expected_exact=True,
    )
    assert service.jobs.work(seconds=0) == 1  # one step: the bulk act, asked for first
    assert service.subscriber_jobs.get(bulk.id).finished_at is not None and taken == []
    assert service.jobs.work(kinds=("bulk",)) == 0 and taken == []
    assert service.jobs.work() == 1 and taken == [(toy, 0)]


def test_a_stopped_job_commits_no_step_after_its_stop(clocked: Any) -> None:
    service, _clock = clocked
    taken = _register_toy(service)
    job = _add_toy(service, 5)
    assert service.jobs.work(seconds=0) == 1
    assert service.jobs.stop("toy", job, by="bob") is True
    assert service.jobs.work() == 0
    row = _toy(service, job)
    assert (row["done"], row["stopped_by"], len(taken)) == (1, "bob", 1)
    assert service.jobs.stop("toy", job, by="bob") is False


def test_a_step_whose_lease_went_to_another_rolls_back(clocked: Any) -> None:
    service, clock = clocked
    _register_toy(service)
    job = _add_toy(service, 2)
    rows = {"toy": service.jobs.kinds["toy"].rows}
    with service.storage.transaction() as uow:
        stale = uow.job_leases.claim(rows, lease="stale", now=NOW, until=NOW + jobs.LEASE)
    assert stale is not None and stale.kind == "toy"
    clock.now = NOW + 2 * jobs.LEASE
    with service.storage.transaction() as uow:
        uow.job_leases.claim(rows, lease="new", now=clock.now, until=clock.now + jobs.LEASE)
    with pytest.raises(jobs.LeaseLost):
        next(iter(service.jobs.kinds["toy"].steps(stale.record, "stale")))
    assert _toy(service, job)["done"] == 0


def test_a_kind_is_registered_once_on_rows_with_the_lease_columns(clocked: Any) -> None:
    service, _clock = clocked
    kind = service.jobs.kinds[subscriber_jobs.KIND]
    with pytest.raises(ValueError, match="bulk"):
        service.jobs.register(kind)
    bare = Table("test_bare_jobs", MetaData(), Column("id", Integer, primary_key=True))
    with pytest.raises(ValueError, match="lease, lease_until, requested_at, started_at"):
        service.jobs.register(replace(kind, name="bare", rows=JobTable(bare, _waiting, dict)))
    with pytest.raises(NotFound):
        service.jobs.stop("toy", 1, by="bob")
    assert "bare" not in service.jobs.kinds
