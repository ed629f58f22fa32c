"""Uploads in every encoding an import reads (UTF-8 with or without a byte-order mark, UTF-16
with one, Latin-1, Windows-1252) are decoded once as they arrive and kept as UTF-8 text, so
erasing an address ends every upload holding it in any letter case; any other encoding name,
a Python codec such as ``hex`` included, is refused by name."""

from __future__ import annotations

import codecs
import io
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import select

from newsletter_connector.errors import InvalidRequest
from newsletter_connector.plugins.sql_store.tables import import_file_parts
from newsletter_connector.service.importing import ImportOptions, Provenance
from newsletter_connector.service.importing import _jobs as import_jobs
from newsletter_connector.service.importing._files import ImportSource, closed_codec, inspect
from tests.support.analytics_helpers import clocked_service

NOW = datetime(2026, 11, 20, 9, 0, 0)
CONSENT = ImportOptions(provenance=Provenance("old list", "2024-01-02T03:04:05Z"))
#: A file naming the reader to be erased in capitals, and one to keep, with names only the
#: right decoding reads.
TEXT = "email\tfirst_name\nANN.LEE@Example.ORG\tZoë\nbob@example.org\tRenée\n"
#: Each encoding an upload may arrive in: its bytes, and the encoding kept for the job.
ARRIVALS = {
    "utf-16-le": (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-16"),
    "utf-16-be": (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16"),
    "latin-1": (TEXT.encode("latin-1"), "latin-1"),
    "windows-1252": ((TEXT + "cy@example.org\t€uro\n").encode("cp1252"), "latin-1"),
    "utf-8-sig": (codecs.BOM_UTF8 + TEXT.encode(), "utf-8-sig"),
}


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    return clocked_service(newsletter_settings, newsletter_storage, NOW)[0]


def upload(service: Any, data: bytes) -> Any:
    return service.import_jobs.upload(
        io.BytesIO(data), file_name="readers.txt", requested_by="owner@example.org"
    )


def stored(service: Any, job_id: int) -> bytes:
    with service.storage.engine.connect() as connection:
        parts = connection.scalars(
            select(import_file_parts.c.data)
            .where(import_file_parts.c.job_id == job_id)
            .order_by(import_file_parts.c.seq)
        )
        return b"".join(bytes(part) for part in parts)


def imported(service: Any) -> dict[str, str | None]:
    with service.storage.transaction(write=False) as uow:
        rows = uow.subscribers.list_page(status=None, after_id=None, limit=100)
    return {row.email: row.first_name for row in rows}


@pytest.mark.parametrize("arrival", sorted(ARRIVALS))
def test_an_upload_is_kept_as_utf8_text_and_read_in_its_encoding(
    service: Any, arrival: str
) -> None:
    data, encoding = ARRIVALS[arrival]
    job = upload(service, data)
    assert (job.encoding, job.size, job.lines) == (encoding, len(data), data.count(b"\n") or 4)
    text = stored(service, job.id).decode("utf-8")
    assert text.lstrip("\ufeff").startswith("email\tfirst_name\nANN.LEE@Example.ORG\t")
    chosen = "cp1252" if arrival == "windows-1252" else None
    service.import_jobs.choose(job.id, replace(CONSENT, encoding=chosen))
    service.import_jobs.work()
    service.import_jobs.start(job.id, by="owner@example.org", mails_confirmed=True)
    service.import_jobs.work()
    names = imported(service)
    assert names["ann.lee@example.org"] == "Zoë" and names["bob@example.org"] == "Renée"
    if arrival == "windows-1252":
        assert names["cy@example.org"] == "€uro"


@pytest.mark.parametrize("arrival", sorted(ARRIVALS))
@pytest.mark.parametrize("spelling", ["ann.lee@example.org", "Ann.Lee@EXAMPLE.org"])
def test_erasing_an_address_ends_every_upload_holding_it_in_any_encoding_and_case(
    service: Any, monkeypatch: pytest.MonkeyPatch, arrival: str, spelling: str
) -> None:
    monkeypatch.setattr(import_jobs, "PART_BYTES", 7)  # the address straddles parts
    data, _encoding = ARRIVALS[arrival]
    holding = upload(service, data)
    checked = upload(service, data)
    service.import_jobs.choose(checked.id, CONSENT)
    service.import_jobs.work()
    other = upload(service, "email\nbob@example.org\n".encode("utf-16"))
    service.subscribers.erase_address(spelling)
    for job in (holding, checked):
        ended = service.import_jobs.get(job.id)
        assert (ended.phase, ended.stopped_by) == ("discarded", "the erasure of an address")
        assert stored(service, job.id) == b""
        with pytest.raises(InvalidRequest):
            service.import_jobs.start(job.id, by="owner@example.org", mails_confirmed=True)
    assert service.import_jobs.get(other.id).phase == "uploaded"
    service.import_jobs.work()
    assert "ann.lee@example.org" not in imported(service)


def test_a_utf16_upload_that_does_not_decode_stores_nothing(service: Any) -> None:
    for data in (codecs.BOM_UTF16_LE + b"e\x00m\x00a", codecs.BOM_UTF16_LE + b"\x00\xdc\n\x00"):
        with pytest.raises(InvalidRequest) as refused:
            upload(service, data)
        assert refused.value.field == "file" and "UTF-16" in refused.value.message
    assert service.import_jobs.recent() == []


@pytest.mark.parametrize(
    ("name", "closed"),
    [
        ("UTF8", "utf-8"),
        ("utf_8_sig", "utf-8-sig"),
        ("UTF-16", "utf-16"),
        ("ISO-8859-1", "latin-1"),
        ("latin1", "latin-1"),
        ("Windows-1252", "cp1252"),
    ],
)
def test_the_closed_encodings_are_known_by_every_spelling(name: str, closed: str) -> None:
    assert closed_codec(name) == closed


@pytest.mark.parametrize(
    "name", ["hex", "rot13", "base64", "zlib", "utf-16-le", "utf-32", "ascii", "no-such", "x\x00"]
)
def test_any_other_encoding_name_is_refused_by_name(name: str) -> None:
    source = ImportSource.from_bytes(b"email\nann@example.org\n")
    with pytest.raises(InvalidRequest) as refused:
        inspect(source, max_bytes=1000, encoding=name)
    assert refused.value.field == "encoding"
    assert repr(name[:40]) in refused.value.message and "Windows-1252" in refused.value.message


def test_utf16_without_a_byte_order_mark_is_refused_and_with_one_detected() -> None:
    bare = ImportSource.from_bytes("email\nann@example.org\n".encode("utf-16-le"))
    with pytest.raises(InvalidRequest) as refused:
        inspect(bare, max_bytes=1000, encoding="utf-16")
    assert refused.value.field == "encoding" and "byte-order mark" in refused.value.message
    marked = ImportSource.from_bytes("email\nann@example.org\nbo@example.org".encode("utf-16"))
    shape = inspect(marked, max_bytes=1000)
    assert (shape.encoding, shape.encoding_detected, shape.lines) == ("utf-16", True, 3)
    assert shape.encoding_label == "UTF-16 with a byte-order mark (detected)"
