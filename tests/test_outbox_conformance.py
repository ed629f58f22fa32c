"""The built-in SQL store against the outbox delivery conformance mixin."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.testing.conformance_outbox import OutboxConformance


class TestSqlOutbox(OutboxConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        return newsletter_storage
