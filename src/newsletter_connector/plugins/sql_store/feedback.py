"""The SQL store's record of platform feedback and of suppressions (``SqlFeedback``)."""

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
from .upserts import insert_unless_stored


class SqlFeedback(SqlRepository):
    """What the connected platform reported (bounces, complaints, unsubscribes), and the
    suppressions it left for addresses no subscriber had.

    Kept in ``nc_platform_feedback`` and ``nc_suppressions``."""

    def claim(self, record: FeedbackRecord) -> bool:
        # ON CONFLICT DO NOTHING waits for a concurrent insert of the same id to commit.
        """Store ``record`` unless an item with its id is stored; true when this call stored
        it. A concurrent claim of the same id waits for the other unit of work and then answers
        false, so each item is applied once."""
        return insert_unless_stored(self.connection, platform_feedback, asdict(record))

    def set_outcome(self, feedback_id: str, outcome: str) -> None:
        """Record what applying the claimed item ``feedback_id`` did."""
        self.connection.execute(
            update(platform_feedback)
            .where(platform_feedback.c.id == feedback_id)
            .values(outcome=outcome)
        )

    def history(self, email_hmac: str) -> list[FeedbackRecord]:
        """The items about the address with this keyed hash, oldest first."""
        rows = self.connection.execute(
            select(platform_feedback)
            .where(platform_feedback.c.email_hmac == email_hmac)
            .order_by(platform_feedback.c.received_at, platform_feedback.c.occurred_at)
        ).mappings()
        return [record_of(FeedbackRecord, row) for row in rows]

    def suppress(
        self, *, email_hmac: str, kind: FeedbackKind, occurred_at: datetime, at: datetime
    ) -> None:
        """Record a suppression of the address; one already recorded is kept as it is."""
        insert_unless_stored(
            self.connection,
            suppressions,
            {"email_hmac": email_hmac, "kind": kind, "occurred_at": occurred_at, "recorded_at": at},
        )

    def suppression(self, email_hmac: str) -> SuppressionRecord | None:
        """The suppression of the address with this keyed hash, if any."""
        row = (
            self.connection.execute(
                select(suppressions).where(suppressions.c.email_hmac == email_hmac)
            )
            .mappings()
            .first()
        )
        return None if row is None else record_of(SuppressionRecord, row)

    def suppressions(self, email_hmacs: Sequence[str]) -> dict[str, SuppressionRecord]:
        """The suppressions of the addresses with these keyed hashes (an import's chunk at
        once), by keyed hash; an address without one is left out."""
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
        """Remove the address's suppression; whether there was one."""
        result = self.connection.execute(
            delete(suppressions).where(suppressions.c.email_hmac == email_hmac)
        )
        return result.rowcount > 0

    def forget(self, email_hmac: str) -> int:
        """Erasure: remove the address's suppression and clear ``email_hmac`` and ``reason``
        of its items (the items stay, so a retry is still recognised); how many items."""
        self.lift(email_hmac)
        result = self.connection.execute(
            update(platform_feedback)
            .where(platform_feedback.c.email_hmac == email_hmac)
            .values(email_hmac=None, reason=None)
        )
        return result.rowcount
