"""The built-in SQL storage backend, registered as an ordinary plugin named ``sql``."""

from __future__ import annotations

from ...descriptors import StorageBackend, SubscriberStore
from ...hookspecs import hookimpl
from .builtin import BuiltinSqlStorage
from .commit_horizon import CommitHorizon
from .prefix_range import prefix_range
from .store import BUILTIN_SUBSCRIBERS, SqlStorage
from .subscriber_scan import walk_order, walk_where

__all__ = [
    "BuiltinSqlStorage",
    "CommitHorizon",
    "SqlStorage",
    "newsletter_storage_backends",
    "newsletter_subscriber_stores",
    "prefix_range",
    "walk_order",
    "walk_where",
]


@hookimpl(trylast=True)
def newsletter_storage_backends() -> list[StorageBackend]:
    return [
        StorageBackend(
            name="sql",
            description="SQLAlchemy Core store: SQLite (default) or PostgreSQL",
            factory=BuiltinSqlStorage.from_settings,
            takes_subscriber_store=True,
        )
    ]


@hookimpl(trylast=True)
def newsletter_subscriber_stores() -> list[SubscriberStore]:
    return [BUILTIN_SUBSCRIBERS]
