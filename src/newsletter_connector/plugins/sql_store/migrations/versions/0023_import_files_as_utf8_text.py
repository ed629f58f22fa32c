"""Uploads kept as UTF-8 text

``nc_import_jobs`` gains ``encoding``, the one each upload arrived in, and the parts of every
upload still kept (``nc_import_file_parts``) are rewritten as its text in UTF-8: an upload that
starts with a UTF-16 byte-order mark is decoded as UTF-16, one that is not UTF-8 as Latin-1.
Erasure searches that text, so an address is found in it whatever the file's encoding. Going
down writes each file back in the bytes of its encoding.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28 16:30:00.000000
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from newsletter_connector.plugins.sql_store.migrations.portable_types import LongBinary

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PART = 1 << 20
_parts = sa.table(
    "nc_import_file_parts",
    sa.column("job_id", sa.BigInteger()),
    sa.column("seq", sa.Integer()),
    sa.column("data", LongBinary),
)
_jobs = sa.table("nc_import_jobs", sa.column("id", sa.BigInteger()), sa.column("encoding"))


def _arrived(data: bytes) -> tuple[str, str]:
    """The encoding ``data`` arrived in, and its text."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", data.decode("utf-16", errors="replace")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1", data.decode("latin-1")
    return ("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"), text


def _kept_files() -> dict[int, bytes]:
    """Each kept file, whole, by its job."""
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_parts.c.job_id, _parts.c.data).order_by(_parts.c.job_id, _parts.c.seq)
    )
    files: dict[int, bytes] = {}
    for job_id, data in rows:
        files[job_id] = files.get(job_id, b"") + bytes(data)
    return files


def _store(files: dict[int, bytes]) -> None:
    """Store each file again, in parts."""
    connection = op.get_bind()
    for job_id, data in files.items():
        connection.execute(sa.delete(_parts).where(_parts.c.job_id == job_id))
        for seq, start in enumerate(range(0, max(len(data), 1), _PART)):
            connection.execute(
                sa.insert(_parts).values(job_id=job_id, seq=seq, data=data[start : start + _PART])
            )


def upgrade() -> None:
    with op.batch_alter_table("nc_import_jobs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("encoding", sa.String(length=16), server_default="utf-8", nullable=False)
        )
    connection = op.get_bind()
    files = _kept_files()
    for job_id, data in files.items():
        encoding, text = _arrived(data)
        connection.execute(sa.update(_jobs).where(_jobs.c.id == job_id).values(encoding=encoding))
        if encoding not in ("utf-8", "utf-8-sig"):
            files[job_id] = text.encode("utf-8")
    _store(files)


def downgrade() -> None:
    connection = op.get_bind()
    files = _kept_files()
    for job_id, data in files.items():
        encoding = connection.scalar(sa.select(_jobs.c.encoding).where(_jobs.c.id == job_id))
        if encoding not in (None, "utf-8", "utf-8-sig"):
            files[job_id] = data.decode("utf-8").encode(encoding, errors="replace")
    # On SQLite the table is copied to drop a column, and dropping the old one deletes the
    # parts through their foreign key: they are stored again after.
    with op.batch_alter_table("nc_import_jobs", schema=None) as batch_op:
        batch_op.drop_column("encoding")
    _store(files)
