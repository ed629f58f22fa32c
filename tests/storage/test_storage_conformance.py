"""The built-in SQL store passes the conformance suite shipped for backend authors with its
speed paths (``BuiltinSqlStorage``, the ``sql`` backend) and without them (the plain
``SqlStorage``), so each speed path is a tested twin of the plain one; and so does a backend that
implements only what the contract requires (``StorageBase`` answers the rest)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage, SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.storage.unit_of_work import StorageBase, UnitOfWork
from newsletter_connector.testing import StorageConformance


class TestSqlStorage(StorageConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        assert isinstance(newsletter_storage, BuiltinSqlStorage)  # with the speed paths
        return newsletter_storage


@pytest.mark.system  # the whole suite again, without the speed paths
class TestPlainSqlStorage(StorageConformance):
    @pytest.fixture
    def storage(self, newsletter_database_url: str, newsletter_storage: Any) -> Iterator[Any]:
        backend = SqlStorage(make_engine(newsletter_database_url))
        assert not isinstance(backend, BuiltinSqlStorage)
        yield backend  # newsletter_storage empties the tables afterwards
        backend.close()


class RequiredOnly(StorageBase):
    """A backend with the required methods only: its unit of work is the SQL store's, and the
    key check, the connection check and the signup are ``StorageBase``'s."""

    def __init__(self, inner: SqlStorage) -> None:
        self.inner = inner

    def transaction(self, *, write: bool = True) -> AbstractContextManager[UnitOfWork]:
        return self.inner.transaction(write=write)

    def check_ready(self) -> None:
        self.inner.check_ready()

    def migrate(self) -> None:
        self.inner.migrate()

    def close(self) -> None:
        self.inner.close()


@pytest.mark.system  # the whole suite again, on another backend
class TestRequiredOnlyStorage(StorageConformance):
    @pytest.fixture
    def storage(self, newsletter_database_url: str, newsletter_storage: Any) -> Iterator[Any]:
        backend = RequiredOnly(SqlStorage(make_engine(newsletter_database_url)))
        yield backend  # newsletter_storage empties the tables afterwards
        backend.close()
