"""The built-in SQL store passes the campaigns (list-source) conformance mixin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from newsletter_connector.testing.conformance_campaigns import CampaignConformance
from tests.listsource_fixtures import insert_issue, insert_subscriber


class TestSqlCampaigns(CampaignConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        return newsletter_storage

    @pytest.fixture
    def store_issue(self, storage: Any) -> Callable[..., int]:
        return lambda **values: insert_issue(storage, **values)

    @pytest.fixture
    def store_subscriber(self, storage: Any) -> Callable[..., None]:
        return lambda **values: insert_subscriber(storage, **values)
