"""The built-in SQL store passes the issue-repository conformance tests."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector.testing.conformance_issues import IssuesConformance


class TestSqlIssues(IssuesConformance):
    @pytest.fixture
    def storage(self, newsletter_storage: Any) -> Any:
        return newsletter_storage
