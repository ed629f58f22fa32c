"""Helpers shared by the analytics and export tests: a service with a settable clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import falcon.testing

from newsletter_connector import NewsletterService, create_app

TOKEN = "export-token-0123456789abcdef"


class Clock:
    """A settable clock for the service (naive UTC)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def clocked_service(settings: Any, storage: Any, now: datetime) -> tuple[NewsletterService, Clock]:
    clock = Clock(now)
    return NewsletterService.build(settings, storage=storage, clock=clock), clock


def client_for(service: NewsletterService) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(create_app(service=service))


def connect(service: NewsletterService, token: str = TOKEN) -> dict[str, str]:
    """Configure a connection and return the headers that authenticate with its token."""
    # Through the storage protocol: the transport plugins are built on another branch.
    with service.storage.transaction() as uow:
        uow.connections.replace(
            platform_base="https://platform.example.test",
            transport="events",
            token=token,
            at=service.context.clock(),
        )
    return {"Authorization": f"Bearer {token}"}


def pageview(
    service: NewsletterService, path: str = "/", visitor: str = "visitor-1", **kw: Any
) -> int:
    return service.analytics.record_event(
        "pageview",
        visitor_id=visitor,
        session_id=kw.pop("session", "session-1"),
        path=path,
        **kw,
    )


def insert_raw_events(
    engine: Any, rows: list[tuple[str, str, str | None]], *, at: datetime, kind: str = "pageview"
) -> None:
    """Store ``(path, referrer, props JSON text)`` rows as they are, past capture's checks (as
    rows stored by an older version): what a repair migration then finds."""
    from sqlalchemy import text

    props_sql = "CAST(:props AS JSON)" if engine.dialect.name == "postgresql" else ":props"
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO nc_analytics_events (occurred_at, day, event_type, visitor_id, "
                f"session_id, path, referrer, props) VALUES (:at, :day, '{kind}', 'v', 's', "
                f":path, :referrer, {props_sql})"
            ),
            [
                {"at": at, "day": at.date(), "path": p, "referrer": r, "props": j}
                for p, r, j in rows
            ],
        )
