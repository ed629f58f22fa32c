"""The per-request credential checks: ``SqlStorage`` answers them through its unit of work, so
a store whose unit of work swaps a repository in gets that repository asked; the ``sql``
backend (``BuiltinSqlStorage``) checks the API key without opening one.

That each check sees a revocation or a disabled connection on the very next request, in every
gunicorn worker, is ``test_reliability_security.py``; every field of the answer is the
store's own tests' (``tests/plugins/sql_store/test_sql_repositories.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from functools import cached_property
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.plugins.sql_store import BuiltinSqlStorage, SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.store import SqlUnitOfWork
from newsletter_connector.storage.access_records import ApiKeyRecord, ConnectionRecord

T0 = datetime(2026, 11, 21, 9, 0)
HOST_CONNECTION = ConnectionRecord(
    id=41, platform_base="https://host.example", transport="events", token="h" * 24,
    created_at=T0, disabled_at=None,
)  # fmt: skip
HOST_KEY = ApiKeyRecord(id=42, label="host", key_prefix="nlk_host", created_at=T0, revoked_at=None)


class HostConnections:
    def active(self) -> ConnectionRecord | None:
        return HOST_CONNECTION


class HostKeys:
    def find_active_by_digest(self, key_digest: str) -> ApiKeyRecord | None:
        return HOST_KEY if key_digest == "host-digest" else None


class SwappingUnitOfWork(SqlUnitOfWork):
    @cached_property
    def connections(self) -> Any:
        return HostConnections()

    @cached_property
    def keys(self) -> Any:
        return HostKeys()


class SwappingStorage(SqlStorage):
    """The plain store whose units of work answer keys and connections from elsewhere."""

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[SwappingUnitOfWork]:
        with super().transaction(write=write) as uow:
            yield SwappingUnitOfWork(uow.connection)


class NoUnitOfWork(BuiltinSqlStorage):
    """The built-in store, refusing to open a unit of work: only a shortcut answers."""

    def transaction(self, *, write: bool = True) -> AbstractContextManager[Any]:
        raise AssertionError("a credential check opened a unit of work")


@pytest.fixture
def swapping(newsletter_database_url: str, newsletter_storage: Any) -> Iterator[SwappingStorage]:
    storage = SwappingStorage(make_engine(newsletter_database_url))
    yield storage
    storage.close()


def test_a_swapped_repository_is_asked(swapping: SwappingStorage) -> None:
    assert swapping.find_active_connection() == HOST_CONNECTION
    assert swapping.find_active_api_key("host-digest") == HOST_KEY
    assert swapping.find_active_api_key("other") is None


def test_the_key_check_opens_no_unit_of_work(
    newsletter_database_url: str, newsletter_service: Any, newsletter_storage: Any
) -> None:
    key = newsletter_service.admin.create_api_key("walker").key
    light = NoUnitOfWork(make_engine(newsletter_database_url))
    try:
        service = type(newsletter_service).build(newsletter_service.settings, storage=light)
        client = falcon.testing.TestClient(create_app(service=service))
        status = client.simulate_get(
            "/api/newsletter/v1/status", headers={"Authorization": f"Bearer {key}"}
        )
        assert status.status_code == 200
        wrong = client.simulate_get(
            "/api/newsletter/v1/status", headers={"Authorization": f"Bearer {key}x"}
        )
        assert wrong.status_code == 401
    finally:
        light.close()
