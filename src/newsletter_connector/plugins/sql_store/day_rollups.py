"""The SQL store's kept rollups of settled days (``SqlDayRollups``), one row a day."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import select

from .repository import SqlRepository
from .tables import day_rollups
from .upserts import insert_unless_stored


class SqlDayRollups(SqlRepository):
    """Settled days' analytics rollups, kept so the admin pages need not compute them again."""

    def kept(self, first: date, last: date) -> dict[date, dict[str, Any]]:
        """The kept figures of each day from ``first`` to ``last`` inclusive that has them."""
        d = day_rollups.c
        rows = self.connection.execute(
            select(d.day, d.figures).where(d.day >= first, d.day <= last)
        )
        return {day: figures for day, figures in rows}

    def keep(self, day: date, figures: dict[str, Any], *, at: datetime) -> None:
        """Keep ``figures`` (JSON-ready) for ``day``, unless figures are already kept for it
        (racing writers keep the first; a settled day's figures are the same for all)."""
        insert_unless_stored(
            self.connection, day_rollups, {"day": day, "figures": figures, "kept_at": at}
        )
