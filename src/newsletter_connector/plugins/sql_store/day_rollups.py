"""The SQL store's kept rollups of settled days (``DayRollupRepository``), one row a day."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import select

from .repository import SqlRepository
from .tables import day_rollups
from .upserts import insert_ignoring_duplicates


class SqlDayRollups(SqlRepository):
    def kept(self, first: date, last: date) -> dict[date, dict[str, Any]]:
        d = day_rollups.c
        rows = self.connection.execute(
            select(d.day, d.figures).where(d.day >= first, d.day <= last)
        )
        return {day: figures for day, figures in rows}

    def keep(self, day: date, figures: dict[str, Any], *, at: datetime) -> None:
        self.connection.execute(
            insert_ignoring_duplicates(self.connection.dialect.name, day_rollups).values(
                day=day, figures=figures, kept_at=at
            )
        )
