"""Migration 0023: uploads stored before it, in UTF-16, Latin-1 or UTF-8, are rewritten as UTF-8
text with the encoding each arrived in, so erasure then finds an address in a UTF-16 upload in
any letter case; going down writes each back in its own bytes, and up again."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.migrate import alembic_config, upgrade
from tests.plugins.sql_store.test_rollup_day_migration import empty_database

pytestmark = pytest.mark.system  # migrates databases down and up

TEXT = "email\tfirst_name\nANN.LEE@Example.ORG\tZoë\n"
FILES = {
    "utf-16": codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"),
    "latin-1": TEXT.encode("latin-1"),
    "utf-8": TEXT.encode(),
}
ADD_JOB = text(
    "INSERT INTO nc_import_jobs (file_name, size, lines, phase, options, requested_by, "
    "requested_at, position, counts, refusals, checked_counts) VALUES (:name, 1, 2, "
    "'uploaded', '{}', 'ada', '2026-11-01 12:00:00', 0, '{}', '[]', '{}')"
)
ADD_PART = text("INSERT INTO nc_import_file_parts (job_id, seq, data) VALUES (:job, :seq, :data)")


def _files(connection: object) -> dict[str, bytes]:
    rows = connection.execute(  # type: ignore[attr-defined]
        text(
            "SELECT j.file_name, p.data FROM nc_import_jobs j JOIN nc_import_file_parts p "
            "ON p.job_id = j.id ORDER BY j.id, p.seq"
        )
    )
    files: dict[str, bytes] = {}
    for name, data in rows:
        files[name] = files.get(name, b"") + bytes(data)
    return files


def test_0023_keeps_stored_uploads_as_utf8_text_and_goes_down_and_up(tmp_path: Path) -> None:
    with empty_database(tmp_path) as url:
        engine = make_engine(url)
        try:
            upgrade(engine, "0022")
            with engine.begin() as connection:
                for name, data in FILES.items():
                    connection.execute(ADD_JOB, {"name": name})
                    job = connection.scalar(text("SELECT max(id) FROM nc_import_jobs"))
                    for seq, start in enumerate(range(0, len(data), 5)):  # parts split chars
                        connection.execute(
                            ADD_PART, {"job": job, "seq": seq, "data": data[start : start + 5]}
                        )
            upgrade(engine, "0023")
            with engine.begin() as connection:
                assert _files(connection) == dict.fromkeys(FILES, TEXT.encode())
                encodings = connection.execute(
                    text("SELECT file_name, encoding FROM nc_import_jobs")
                )
                assert {name: encoding for name, encoding in encodings} == {
                    name: name for name in FILES
                }
            command.downgrade(alembic_config(engine), "0022")
            with engine.begin() as connection:
                assert _files(connection) == FILES
            upgrade(engine)
            with engine.begin() as connection:
                assert _files(connection) == dict.fromkeys(FILES, TEXT.encode())
        finally:
            engine.dispose()
