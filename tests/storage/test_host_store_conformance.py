"""The example host's subscriber store (subscribers in its own ``host_users`` table) passes the
subscriber repository's conformance suite, and an app on it serves every surface."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest
from sqlalchemy import delete, func, select

from examples.wsgi_mount import host_site, host_store
from examples.wsgi_mount.host_db import host_users
from examples.wsgi_mount.host_db import metadata as host_metadata
from newsletter_connector import create_app
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.engine import make_engine
from newsletter_connector.testing import SubscriberRepositoryConformance
from newsletter_connector.testing.databases import empty_all_tables


def empty_host_tables(url: str) -> None:
    engine = make_engine(url)
    with engine.begin() as connection:
        for table in reversed(host_metadata.sorted_tables):
            connection.execute(delete(table))
    engine.dispose()


class TestHostSubscribers(SubscriberRepositoryConformance):
    @pytest.fixture
    def storage(self, newsletter_database_url: str) -> Iterator[Any]:
        backend = SqlStorage(make_engine(newsletter_database_url), host_store.HOST_SUBSCRIBERS)
        backend.migrate()  # our migrations (already at head) and the host's own tables
        yield backend
        empty_all_tables(backend.engine)  # the package's tables
        empty_host_tables(newsletter_database_url)  # and the host's
        backend.close()


def test_an_app_on_the_host_store_serves_every_surface(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    """``storage_backend = "host"``: the Newsletter API, a reader page, the list-source and the
    export answer, the subscribers living in ``host_users`` only."""
    settings = newsletter_settings.model_copy(update={"storage_backend": "host"})
    host_site.migrate(settings)  # `db upgrade` for this host: also creates host_users
    app = create_app(settings, plugins=[host_store])
    client = falcon.testing.TestClient(app)
    try:
        service = app.service
        auth = {"Authorization": f"Bearer {service.admin.create_api_key('surfaces').key}"}
        created = client.simulate_post(
            "/api/newsletter/v1/subscribers", json={"email": "eve@example.org"}, headers=auth
        )
        assert created.status_code == 201, created.text
        with newsletter_storage.engine.connect() as connection:
            assert connection.scalar(select(func.count()).select_from(host_users)) == 1
        record = service.subscribers.get("eve@example.org")
        service.subscribers.confirm_by_token(record.confirm_token)

        page = client.simulate_get(f"/profile/{record.profile_token}")
        assert page.status_code == 200  # the reader's token, found in host_users
        assert client.simulate_get("/profile/no-such-token").status_code == 404

        service.admin.set_listsource_credentials("platform", "listsource-key-0123456789")
        basic = base64.b64encode(b"platform:listsource-key-0123456789").decode()
        lists = client.simulate_get(
            "/api/listsource/api/lists", headers={"Authorization": f"Basic {basic}"}
        )
        assert lists.status_code == 200, lists.text
        assert lists.json["data"]["results"][0]["subscriber_count"] == 1

        service.admin.set_connection(
            platform_base="https://platform.example.test", transport="events", token="t" * 24
        )
        export = client.simulate_get(
            "/api/export/status", headers={"Authorization": f"Bearer {'t' * 24}"}
        )
        assert export.status_code == 200 and export.json == {"ok": True}
    finally:
        app.service.close()
        empty_host_tables(settings.database_url)
