"""Imports uploaded in the admin area: the file is stored, checked by a dry run and imported by
the runner a chunk per transaction under the job's lease; a job resumes where it stopped, a lost
lease commits nothing, and the file is forgotten when the job ends."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from newsletter_connector.errors import InvalidRequest
from newsletter_connector.plugins.sql_store.tables import import_file_parts, outbox_events
from newsletter_connector.service import importing
from newsletter_connector.service.importing import ImportOptions, Provenance
from newsletter_connector.service.importing import _jobs as import_jobs
from newsletter_connector.settings import Settings
from newsletter_connector.storage.import_jobs import ImportJobProgress
from tests.support.analytics_helpers import clocked_service

NOW = datetime(2026, 11, 20, 9, 0, 0)
CONSENT = ImportOptions(provenance=Provenance("old list", "2024-01-02T03:04:05Z"))
LINES = 2 * importing.CHUNK + 30


@pytest.fixture
def clocked(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW)


@pytest.fixture
def service(clocked: Any) -> Any:
    return clocked[0]


def upload(service: Any, text: str, name: str = "readers.csv") -> Any:
    return service.import_jobs.upload(
        io.BytesIO(text.encode()), file_name=name, requested_by="owner@example.org"
    )


def readers_file(count: int = LINES, bad_every: int = 0) -> str:
    lines = ["email,first_name"]
    for n in range(count):
        bad = bad_every and n % bad_every == 0
        lines.append(f"{'not-an-address' if bad else f'reader{n:04d}@example.org'},Reader")
    return "\n".join(lines) + "\n"


def counts(service: Any) -> tuple[int, int]:
    with service.storage.engine.connect() as connection:
        events = connection.scalar(select(func.count()).select_from(outbox_events))
    with service.storage.transaction(write=False) as uow:
        return int(uow.subscribers.count()), int(events)


def stored_parts(service: Any) -> int:
    with service.storage.engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(import_file_parts)))


def test_an_upload_is_checked_then_imported_and_its_file_forgotten(service: Any) -> None:
    job = upload(service, readers_file(bad_every=100))
    assert (job.phase, job.lines, job.size) == (
        "uploaded",
        LINES + 1,
        len(readers_file(bad_every=100)),
    )
    job = service.import_jobs.choose(job.id, CONSENT)
    assert job.phase == "checking"
    service.import_jobs.work()
    job = service.import_jobs.get(job.id)
    refused = len(range(0, LINES, 100))
    assert job.phase == "checked"
    assert job.counts == {"added": LINES - refused, "refused": refused}
    assert [r["line"] for r in job.refusals] == [2 + n for n in range(0, LINES, 100)]
    assert job.refusals[0]["field"] == "email"
    assert counts(service) == (0, 0)  # a dry run stores nothing

    job = service.import_jobs.start(job.id, by="owner@example.org", mails_confirmed=False)
    assert (job.phase, job.started_by, job.checked_counts) == (
        "importing",
        "owner@example.org",
        {"added": LINES - refused, "refused": refused},
    )
    service.import_jobs.work()
    job = service.import_jobs.get(job.id)
    assert job.phase == "imported" and job.counts == job.checked_counts
    assert counts(service) == (LINES - refused, 2 * (LINES - refused))
    assert stored_parts(service) == 0


def test_a_job_resumes_where_it_stopped_and_applies_no_line_twice(service: Any) -> None:
    job = upload(service, readers_file())
    service.import_jobs.choose(job.id, CONSENT)
    service.import_jobs.work()
    service.import_jobs.start(job.id, by="owner", mails_confirmed=True)
    service.import_jobs.work(seconds=0)  # one chunk, then back to delivering
    job = service.import_jobs.get(job.id)
    assert job.phase == "importing" and job.counts == {"added": importing.CHUNK}
    assert job.position == importing.CHUNK + 1
    while service.import_jobs.get(job.id).phase == "importing":
        service.import_jobs.work(seconds=0)
    assert counts(service) == (LINES, 2 * LINES)
    assert service.import_jobs.get(job.id).counts == {"added": LINES}


def test_a_runner_that_lost_its_lease_commits_nothing(service: Any) -> None:
    job = upload(service, readers_file())
    service.import_jobs.choose(job.id, CONSENT)
    service.import_jobs.work()
    service.import_jobs.start(job.id, by="owner", mails_confirmed=True)
    with service.storage.transaction() as uow:
        claimed = uow.import_jobs.claim(lease="other", now=NOW, until=NOW + timedelta(hours=1))
    assert claimed is not None and claimed.id == job.id
    assert service.import_jobs.work() == 0  # leased to another runner: not claimed
    # The lease holder's chunk commits; a runner holding a stale lease token cannot.
    with service.storage.transaction() as uow:
        plan = service.import_jobs.plan(claimed)
        chunk = next(service.subscriber_import.chunks(plan, service.subscriber_import.reader(plan)))
        service.subscriber_import.apply_chunk(uow, chunk, plan.options, dry_run=False)
        stale = ImportJobProgress(chunk.last_line, {"added": 1}, [], False)
        assert not uow.import_jobs.advance(job.id, stale, lease="stale", now=NOW, until=NOW)
        uow.connection.rollback()  # the chunk rolls back with the refused advance
    assert counts(service) == (0, 0)


def test_pending_lines_need_the_mails_confirmed(service: Any) -> None:
    job = upload(service, "email\nann@example.org\nbob@example.org\n")
    service.import_jobs.choose(job.id, ImportOptions(pending=True))
    service.import_jobs.work()
    assert service.import_jobs.get(job.id).counts == {"added_pending": 2}
    with pytest.raises(InvalidRequest) as refused:
        service.import_jobs.start(job.id, by="owner", mails_confirmed=False)
    assert refused.value.field == "confirm_mails"
    service.import_jobs.start(job.id, by="owner", mails_confirmed=True)
    service.import_jobs.work()
    assert counts(service) == (2, 2)


def test_choices_that_cannot_read_the_file_are_refused(service: Any) -> None:
    job = upload(service, "E-Mail,Name\nann@example.org,Ann\n")
    with pytest.raises(InvalidRequest) as refused:
        service.import_jobs.choose(job.id, CONSENT)
    assert refused.value.field == "columns"
    assert service.import_jobs.get(job.id).phase == "uploaded"
    chosen = ImportOptions(provenance=CONSENT.provenance, columns={"E-Mail": "email"})
    assert service.import_jobs.choose(job.id, chosen).phase == "checking"


def test_stopping_ends_the_job_and_forgets_its_file(service: Any) -> None:
    job = upload(service, readers_file())
    service.import_jobs.choose(job.id, CONSENT)
    assert service.import_jobs.stop(job.id, by="owner")
    job = service.import_jobs.get(job.id)
    assert (job.phase, job.stopped_by) == ("stopped", "owner")
    assert stored_parts(service) == 0 and service.import_jobs.work() == 0
    assert not service.import_jobs.stop(job.id, by="owner")
    other = upload(service, readers_file())
    assert service.import_jobs.stop(other.id, by="owner")
    assert service.import_jobs.get(other.id).phase == "discarded"


def test_an_upload_over_the_limit_or_empty_stores_nothing(
    newsletter_settings: Settings, newsletter_storage: Any
) -> None:
    settings = newsletter_settings.model_copy(update={"import_max_bytes": 100})
    service = clocked_service(settings, newsletter_storage, NOW)[0]
    for text in (readers_file(10), ""):
        with pytest.raises(InvalidRequest) as refused:
            upload(service, text)
        assert refused.value.field == "file"
    assert service.import_jobs.recent() == [] and stored_parts(service) == 0


def test_a_file_of_several_parts_reads_back_whole(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(import_jobs, "PART_BYTES", 64)
    text = readers_file(40)
    job = upload(service, text)
    assert stored_parts(service) == -(-len(text) // 64)
    with service.import_jobs.source(job).open() as stream:
        assert stream.read() == text.encode()
    service.import_jobs.choose(job.id, CONSENT)
    service.import_jobs.work()
    assert service.import_jobs.get(job.id).counts == {"added": 40}


def test_erasing_an_address_ends_the_uploads_holding_it_even_across_parts(
    service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(import_jobs, "PART_BYTES", 16)
    text = "email\nsomeone.else@example.org\nMixed.Case@Example.org\n"
    holding = upload(service, text)
    assert stored_parts(service) > 2  # the address straddles two parts
    other = upload(service, "email\nsomeone.else@example.org\n")
    service.subscribers.erase_address("mixed.case@example.org")
    assert service.import_jobs.get(holding.id).phase == "discarded"
    assert service.import_jobs.get(holding.id).stopped_by == "the erasure of an address"
    assert service.import_jobs.part(holding.id, 0) is None
    assert service.import_jobs.get(other.id).phase == "uploaded"
