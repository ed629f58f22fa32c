"""The example host's subscriber store (subscribers in its own ``host_users`` table) passes the
storage conformance suite, like the built-in store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete

from examples.wsgi_mount.host_db import metadata as host_metadata
from examples.wsgi_mount.host_store import HOST_SUBSCRIBERS
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.testing import StorageConformance
from newsletter_connector.testing.databases import empty_all_tables


class TestHostStorage(StorageConformance):
    @pytest.fixture
    def storage(self, newsletter_database_url: str) -> Iterator[Any]:
        backend = SqlStorage(make_engine(newsletter_database_url), HOST_SUBSCRIBERS)
        backend.migrate()  # our migrations (already at head) and the host's own tables
        yield backend
        empty_all_tables(backend.engine)  # the package's tables
        with backend.engine.begin() as connection:  # and the host's
            for table in reversed(host_metadata.sorted_tables):
                connection.execute(delete(table))
        backend.close()
