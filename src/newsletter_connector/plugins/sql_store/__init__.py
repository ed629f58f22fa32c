"""The built-in SQL store, registered as an ordinary plugin offering the storage backend
``sql``: subscribers in its own table."""

from __future__ import annotations

from ...descriptors import SubscriberStore
from ...hookspecs import hookimpl
from .builtin import BuiltinSqlStorage
from .store import BUILTIN_SUBSCRIBERS, SqlStorage

__all__ = ["BuiltinSqlStorage", "SqlStorage", "newsletter_storage_backends"]


@hookimpl(trylast=True)
def newsletter_storage_backends() -> list[SubscriberStore]:
    return [BUILTIN_SUBSCRIBERS]
