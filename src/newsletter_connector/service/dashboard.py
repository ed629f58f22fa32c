"""The admin dashboard's figures (``service.dashboard``): subscribers by status, their changes
per day, the outbox's health, the platform connection and the latest issue, read together."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from ..errors import InvalidRequest
from ..https_rule import without_credentials
from ..model.contact import STATUSES
from ..storage.outbox_records import OutboxStatus
from ..storage.records import IssueRecord, SubscriberDay
from .context import ServiceContext

#: The ranges the dashboard offers, in days (today included).
DASHBOARD_RANGES = (30, 90)


@dataclass(frozen=True)
class ConnectionState:
    """The active platform connection, without its token or any credentials in its address."""

    platform: str
    transport: str
    since: datetime


@dataclass(frozen=True)
class Dashboard:
    """What the dashboard shows; ``days`` holds every day of the range, quiet ones as zeros."""

    by_status: dict[str, int]
    days: list[SubscriberDay]
    outbox: OutboxStatus
    connection: ConnectionState | None
    latest_issue: IssueRecord | None
    now: datetime

    @property
    def total(self) -> int:
        return sum(self.by_status.values())

    @property
    def oldest_pending_age(self) -> timedelta | None:
        """How long the oldest undelivered event has waited."""
        at = self.outbox.oldest_pending_at
        return None if at is None else self.now - at


class DashboardService:
    """``service.dashboard``."""

    def __init__(self, context: ServiceContext) -> None:
        self.context = context

    def overview(self, days: int = DASHBOARD_RANGES[0]) -> Dashboard:
        """The figures for the last ``days`` UTC days (one of :data:`DASHBOARD_RANGES`,
        else :class:`InvalidRequest` naming ``days``), read in one unit of work."""
        if days not in DASHBOARD_RANGES:
            allowed = " or ".join(str(n) for n in DASHBOARD_RANGES)
            raise InvalidRequest(f"days must be {allowed}", field="days")
        now = self.context.clock()
        last = now.date()
        first = last - timedelta(days=days - 1)
        with self.context.storage.transaction(write=False) as uow:
            by_status = {status: uow.subscribers.count(status=status) for status in STATUSES}
            changes = uow.subscribers.changes_per_day(first=first, last=last)
            outbox = uow.outbox.status()
            connection = uow.connections.active()
            recent = uow.issues.list_recent(1, include_bodies=False)
        return Dashboard(
            by_status=by_status,
            days=_every_day(first, last, changes),
            outbox=outbox,
            connection=None
            if connection is None
            else ConnectionState(
                platform=without_credentials(connection.platform_base),
                transport=connection.transport,
                since=connection.created_at,
            ),
            latest_issue=recent[0] if recent else None,
            now=now,
        )


def _every_day(first: date, last: date, changes: list[SubscriberDay]) -> list[SubscriberDay]:
    by_day = {change.day: change for change in changes}
    span = (last - first).days + 1
    days = (first + timedelta(days=n) for n in range(span))
    return [by_day.get(day) or SubscriberDay(day, 0, 0, 0) for day in days]
