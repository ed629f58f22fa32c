"""The built-in subscriber repository passes the conformance suite shipped for a host's
storage backend, in the ``sql`` store with its speed paths (``BuiltinSqlStorage``) and in the
plain ``SqlStorage``, whose signup goes through the unit of work as a host's does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage, SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.testing import SubscriberRepositoryConformance


class TestBuiltinSubscribers(SubscriberRepositoryConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        assert isinstance(newsletter_storage, BuiltinSqlStorage)  # with the speed paths
        return newsletter_storage


@pytest.mark.system  # the suite again, without the speed paths
class TestPlainSqlStorageSubscribers(SubscriberRepositoryConformance):
    @pytest.fixture
    def storage(self, newsletter_database_url: str, newsletter_storage: Any) -> Iterator[Any]:
        backend = SqlStorage(make_engine(newsletter_database_url))
        assert not isinstance(backend, BuiltinSqlStorage)
        yield backend  # newsletter_storage empties the tables afterwards
        backend.close()
