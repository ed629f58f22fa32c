"""The per-request credential checks outside a unit of work (issue 10): ``find_active_api_key``
and ``find_active_connection`` take the SQL store's lighter path, and a store whose unit of
work swaps the repository in gets that repository asked instead.

That each check sees a revocation or a disabled connection on the very next request, in every
gunicorn worker, is ``test_reliability_security.py``; every field of the answer is the
conformance suite's (``newsletter_connector.testing.conformance``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from functools import cached_property
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.plugins.sql_store.store import SqlUnitOfWork
from newsletter_connector.storage import ApiKeyRecord, ConnectionRecord

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
    unit_of_work_class = SwappingUnitOfWork


class NoUnitOfWork(SqlStorage):
    """The built-in store, refusing to open a unit of work: only a lighter path answers."""

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


def test_the_checks_open_no_unit_of_work(
    newsletter_database_url: str, newsletter_service: Any, newsletter_storage: Any
) -> None:
    token = "connection-token-0123456789abcdef"
    newsletter_service.admin.set_connection(
        platform_base="https://platform.example", transport="events", token=token
    )
    key = newsletter_service.admin.create_api_key("walker").key
    light = NoUnitOfWork(make_engine(newsletter_database_url))
    try:
        found = light.find_active_connection()
        assert found is not None and found.token == token
        assert found == newsletter_service.admin.connection()

        service = type(newsletter_service).build(newsletter_service.settings, storage=light)
        client = falcon.testing.TestClient(create_app(service=service))
        export = client.simulate_get(
            "/api/export/status", headers={"Authorization": f"Bearer {token}"}
        )
        assert export.status_code == 200 and export.json == {"ok": True}
        wrong = client.simulate_get(
            "/api/export/status", headers={"Authorization": f"Bearer {token}x"}
        )
        assert wrong.status_code == 404
        status = client.simulate_get(
            "/api/newsletter/v1/status", headers={"Authorization": f"Bearer {key}"}
        )
        assert status.status_code == 200
    finally:
        light.close()
