"""``SqlCampaigns``: stored issues read as list-source campaigns (read-only).

Pages walk the ``(created_at, id)`` index of ``nc_issues``. The list-source dialect addresses
pages by number, so a page is an ``OFFSET`` on that index; the table grows by about one row
a day and callers never ask past ``count()`` (the service checks first).
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.engine import Connection, RowMapping

from ...storage import CampaignRecord
from .tables import issues

_COLUMNS = (
    issues.c.id,
    issues.c.uuid,
    issues.c.kind,
    issues.c.cadence,
    issues.c.issue_date,
    issues.c.subject,
    issues.c.html,
    issues.c.text,
    issues.c.created_at,
    issues.c.updated_at,
)


def _record(row: RowMapping) -> CampaignRecord:
    return CampaignRecord(
        id=int(row["id"]),
        uuid=row["uuid"],
        kind=row["kind"],
        cadence=row["cadence"],
        issue_date=row["issue_date"],
        subject=row["subject"],
        html=row["html"],
        text=row["text"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class SqlCampaigns:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def count(self) -> int:
        return int(self.connection.scalar(select(func.count()).select_from(issues)) or 0)

    def page(self, *, descending: bool, offset: int, limit: int) -> list[CampaignRecord]:
        order = (
            (issues.c.created_at.desc(), issues.c.id.desc())
            if descending
            else (issues.c.created_at.asc(), issues.c.id.asc())
        )
        rows = self.connection.execute(
            select(*_COLUMNS).order_by(*order).offset(offset).limit(limit)
        ).mappings()
        return [_record(row) for row in rows]

    def get(self, campaign_id: int) -> CampaignRecord | None:
        row = (
            self.connection.execute(select(*_COLUMNS).where(issues.c.id == campaign_id))
            .mappings()
            .first()
        )
        return _record(row) if row else None
