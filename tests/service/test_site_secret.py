"""The site secret exists before the first request needs it (keys of queued events).

``db upgrade`` creates it; a database migrated some other way (a host's own migration step,
``storage.migrate()``) gets it when the app starts. Before, its first use was inside a
signup's write transaction, and on SQLite creating it waited for that transaction's lock for
the whole busy timeout.
"""

from __future__ import annotations

import time

import falcon.testing
import pytest

from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.service.context import SITE_SECRET_SETTING


@pytest.fixture
def unsecretive_settings(newsletter_database_url: str, newsletter_storage: object) -> Settings:
    """Settings without a site secret; ``newsletter_storage`` empties the tables afterwards."""
    return Settings(database_url=newsletter_database_url, base_url="https://news.example")


def stored_secret(service: NewsletterService) -> object:
    with service.storage.transaction(write=False) as uow:
        return uow.settings.get(SITE_SECRET_SETTING)


def test_the_first_signup_on_a_database_without_a_secret_is_prompt(
    unsecretive_settings: Settings,
) -> None:
    service = NewsletterService.build(unsecretive_settings)
    service.storage.migrate()  # schema only: no site secret yet
    assert stored_secret(service) is None
    key = service.admin.create_api_key("first").key
    client = falcon.testing.TestClient(create_app(service=service))
    assert stored_secret(service) is not None  # created when the app started
    started = time.monotonic()
    created = client.simulate_post(
        "/api/newsletter/v1/subscribers",
        json={"email": "first@example.org"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert created.status_code == 201, created.text
    assert time.monotonic() - started < 5  # not a busy timeout (30 s) spent on a lock
    service.close()
