"""The built-in SQL store passes the conformance suite shipped for backend authors."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.testing import StorageConformance


class TestSqlStorage(StorageConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        return newsletter_storage
