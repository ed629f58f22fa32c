"""Admin → Import a list, files in every encoding an import reads: a UTF-16 (Excel's Unicode
text), Latin-1 or Windows-1252 upload is read in words on its page, and erasing an address it
holds (in any letter case, from the subscriber page or the command line) ends it before it
can bring the address back; an encoding the import does not read is refused on the page, 400,
with its name, never a 500."""

from __future__ import annotations

import codecs
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from tests.support.admin import get_page, submit
from tests.web.admin.test_admin_imports import _choose, _job_id, _text, _upload

TEXT = "email\tfirst_name\nANN.LEE@Example.ORG\tZoë\nbob@example.org\tRenée\n"
FILES = {
    "utf-16": (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "UTF-16 with a byte-order mark"),
    "latin-1": (TEXT.encode("latin-1"), "Latin-1"),
    "windows-1252": ((TEXT + "cy@example.org\t€uro\n").encode("cp1252"), "Latin-1"),
}
CONSENT = {"consent_source": "old list", "consent_collected_at": "2024-01-02T03:04:05Z"}


def _imported(service: Any) -> dict[str, str | None]:
    with service.storage.transaction(write=False) as uow:
        rows = uow.subscribers.list_page(status=None, after_id=None, limit=100)
    return {row.email: row.first_name for row in rows}


def _erase_from_the_command_line(service: Any, address: str) -> None:
    settings = service.settings
    env = {
        "NEWSLETTER_DATABASE_URL": settings.database_url,
        "NEWSLETTER_BASE_URL": settings.base_url,
        "NEWSLETTER_SITE_SECRET": settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }
    result = CliRunner().invoke(cli, ["erase", address], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _start(client: Any, session: str, job_id: int) -> Any:
    return submit(
        client,
        "/admin/imports/start",
        session,
        {"job": str(job_id), "confirm_mails": "yes"},
        form=f"/admin/imports/{job_id}",
    )


@pytest.mark.parametrize("encoding", sorted(FILES))
def test_an_upload_in_each_encoding_is_read_and_imported(
    client: Any, service: Any, session: str, encoding: str
) -> None:
    data, words = FILES[encoding]
    job_id = _job_id(_upload(client, session, "readers.txt", data))
    page = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert f"{words} (detected)" in page and "tab" in page.lower()
    chosen = {"encoding": "cp1252"} if encoding == "windows-1252" else {}
    assert _choose(client, session, job_id, **CONSENT, **chosen).status_code == 303
    service.import_jobs.work()
    assert _start(client, session, job_id).status_code == 303
    service.import_jobs.work()
    names = _imported(service)
    assert names["ann.lee@example.org"] == "Zoë" and names["bob@example.org"] == "Renée"
    if encoding == "windows-1252":
        assert names["cy@example.org"] == "€uro"
    assert service.import_jobs.get(job_id).encoding in ("utf-16", "latin-1")


@pytest.mark.parametrize("encoding", sorted(FILES))
@pytest.mark.parametrize("by", ["page", "command line"])
def test_erasing_an_address_ends_uploads_holding_it_in_any_encoding(
    client: Any, service: Any, session: str, encoding: str, by: str
) -> None:
    data, _words = FILES[encoding]
    uploaded = _job_id(_upload(client, session, "readers.txt", data))
    checked = _job_id(_upload(client, session, "readers.txt", data))
    assert _choose(client, session, checked, **CONSENT).status_code == 303
    service.import_jobs.work()
    if by == "page":
        erased = submit(
            client,
            "/admin/subscribers/erase",
            session,
            {"email": "Ann.Lee@example.org"},
            form="/admin/subscribers/erase?email=Ann.Lee%40example.org",
        )
        assert erased.status_code < 400, erased.text[:300]
    else:
        _erase_from_the_command_line(service, "ann.lee@EXAMPLE.org")
    for job_id in (uploaded, checked):
        assert service.import_jobs.get(job_id).phase == "discarded"
        assert _start(client, session, job_id).status_code == 400
        assert _choose(client, session, job_id, **CONSENT).status_code == 400
    service.import_jobs.work()
    assert "ann.lee@example.org" not in _imported(service)


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("hex", b"email\nann@example.org\n"),
        ("rot13", b"email\nann@example.org\n"),
        ("base64", b"email\nann@example.org\n"),
        ("utf-16", b"email\nann@example.org\n"),
        ("utf-16", "email\nann@example.org\n".encode("utf-16-le")),
        ("ebcdic-nonsense", b"email\nann@example.org\n"),
    ],
)
def test_an_encoding_the_import_does_not_read_is_refused_on_the_page(
    client: Any, service: Any, session: str, encoding: str, data: bytes
) -> None:
    job_id = _job_id(_upload(client, session, "readers.csv", data))
    result = _choose(client, session, job_id, encoding=encoding, **CONSENT)
    assert result.status_code == 400
    said = _text(result)
    assert "byte-order mark" in said if encoding == "utf-16" else repr(encoding) in said
    assert service.import_jobs.get(job_id).phase == "uploaded"
