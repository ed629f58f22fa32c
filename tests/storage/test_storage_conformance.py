"""The built-in subscriber repository passes the conformance suite shipped for a host's
storage backend, in the ``sql`` store with its speed paths (``BuiltinSqlStorage``). The plain
path of ``SqlStorage`` (a signup through the unit of work) is the one a host's store takes, so
``test_host_store_conformance.py`` runs the suite on it."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
from newsletter_connector.testing import SubscriberRepositoryConformance


class TestBuiltinSubscribers(SubscriberRepositoryConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        assert isinstance(newsletter_storage, BuiltinSqlStorage)  # with the speed paths
        return newsletter_storage
