"""The built-in SQL store passes the subscriber repositories' conformance suite."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.testing.conformance_subscribers import SubscribersConformance


class TestSqlSubscribers(SubscribersConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        return newsletter_storage
