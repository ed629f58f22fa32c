"""The built-in SQL store passes the analytics conformance mixin."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.testing.conformance_analytics import AnalyticsConformance


class TestSqlAnalyticsConformance(AnalyticsConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        return newsletter_storage
