"""The SQL store's record of platform feedback and of suppressions (``FeedbackRepository``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime

from sqlalchemy import Text, any_, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql

from ...storage.records import FeedbackKind, FeedbackRecord, SuppressionRecord
from .record_builders import record_of
from .repository import SqlRepository
from .tables import platform_feedback, suppressions
from .upserts import insert_ignoring_duplicates


class SqlFeedback(SqlRepository):
    """``FeedbackRepository`` on ``nc_platform_feedback`` and ``nc_suppressions``."""

    def claim(self, record: FeedbackRecord) -> bool:
        # ON CONFLICT DO NOTHING waits for a concurrent insert of the same id to commit.
        statement = (
            insert_ignoring_duplicates(self.connection.dialect.name, platform_feedback)
            .values(**asdict(record))
            .returning(platform_feedback.c.id)
        )
        return self.connection.execute(statement).first() is not None

    def set_outcome(self, feedback_id: str, outcome: str) -> None:
        self.connection.execute(
            update(platform_feedback)
            .where(platform_feedback.c.id == feedback_id)
            .values(outcome=outcome)
        )

    def history(self, email_hmac: str) -> list[FeedbackRecord]:
        rows = self.connection.execute(
            select(platform_feedback)
            .where(platform_feedback.c.email_hmac == email_hmac)
            .order_by(platform_feedback.c.received_at, platform_feedback.c.occurred_at)
        ).mappings()
        return [record_of(FeedbackRecord, row) for row in rows]

    def suppress(
        self, *, email_hmac: str, kind: FeedbackKind, occurred_at: datetime, at: datetime
    ) -> None:
        self.connection.execute(
            insert_ignoring_duplicates(self.connection.dialect.name, suppressions).values(
                email_hmac=email_hmac, kind=kind, occurred_at=occurred_at, recorded_at=at
            )
        )

    def suppression(self, email_hmac: str) -> SuppressionRecord | None:
        row = (
            self.connection.execute(
                select(suppressions).where(suppressions.c.email_hmac == email_hmac)
            )
            .mappings()
            .first()
        )
        return None if row is None else record_of(SuppressionRecord, row)

    def suppressions(self, email_hmacs: Sequence[str]) -> dict[str, SuppressionRecord]:
        if not email_hmacs:
            return {}
        wanted = suppressions.c.email_hmac
        matching = (
            # One array parameter: the same text (and plan) for any number of keys.
            wanted == any_(bindparam("keys", type_=postgresql.ARRAY(Text)))
            if self.connection.dialect.name == "postgresql"
            else wanted.in_(bindparam("keys", expanding=True))
        )
        rows = self.connection.execute(
            select(suppressions).where(matching), {"keys": list(email_hmacs)}
        ).mappings()
        return {row["email_hmac"]: record_of(SuppressionRecord, row) for row in rows}

    def lift(self, email_hmac: str) -> bool:
        result = self.connection.execute(
            delete(suppressions).where(suppressions.c.email_hmac == email_hmac)
        )
        return result.rowcount > 0

    def forget(self, email_hmac: str) -> int:
        self.lift(email_hmac)
        result = self.connection.execute(
            update(platform_feedback)
            .where(platform_feedback.c.email_hmac == email_hmac)
            .values(email_hmac=None, reason=None)
        )
        return result.rowcount
