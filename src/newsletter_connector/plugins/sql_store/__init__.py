"""The built-in SQL storage backend, registered as an ordinary plugin named ``sql``."""

from __future__ import annotations

from ...descriptors import StorageBackend, SubscriberStore
from ...hookspecs import hookimpl
from .builtin import BuiltinSqlStorage
from .store import BUILTIN_SUBSCRIBERS, SqlStorage

__all__ = [
    "BuiltinSqlStorage",
    "SqlStorage",
    "newsletter_storage_backends",
    "newsletter_subscriber_stores",
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
