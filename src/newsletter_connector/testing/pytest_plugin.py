"""Pytest fixtures for testing against newsletter-connector (auto-loaded via ``pytest11``),
named ``newsletter_*`` so a host's own fixtures are never shadowed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .databases import empty_all_tables, migrated_database

TEST_BASE_URL = "https://news.example.test/newsletter"


@pytest.fixture(scope="session")
def newsletter_database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated database for this test session (PostgreSQL when
    ``NEWSLETTER_TEST_DATABASE_URL`` is set, else SQLite), dropped at the end."""
    with migrated_database(tmp_path_factory.mktemp("newsletter-db")) as url:
        yield url


@pytest.fixture
def newsletter_storage(newsletter_database_url: str) -> Iterator[Any]:
    """The built-in SQL store on the session database, emptied after each test."""
    from ..plugins.sql_store import BuiltinSqlStorage
    from ..plugins.sql_store.engine import make_engine

    storage = BuiltinSqlStorage(make_engine(newsletter_database_url))
    try:
        yield storage
    finally:
        empty_all_tables(storage.engine)
        storage.close()


@pytest.fixture
def newsletter_settings(newsletter_database_url: str) -> Any:
    """Settings for tests: the session database and an https ``base_url``."""
    from ..settings import Settings

    return Settings(
        database_url=newsletter_database_url,
        base_url=TEST_BASE_URL,
        site_name="Test News",
        postal_address="1 Test Street, Testville, TS 00000",
        site_secret="test-site-secret-not-for-production",  # noqa: S106
    )


@pytest.fixture
def newsletter_service(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    """A :class:`NewsletterService` on the test database."""
    from ..service import NewsletterService

    return NewsletterService.build(newsletter_settings, storage=newsletter_storage)


@pytest.fixture
def newsletter_app(newsletter_service: Any) -> Any:
    """The WSGI app built by ``create_app`` around ``newsletter_service``."""
    from ..web.app import create_app

    return create_app(service=newsletter_service)


@pytest.fixture
def newsletter_client(newsletter_app: Any) -> Any:
    """A ``falcon.testing.TestClient`` for ``newsletter_app``."""
    import falcon.testing

    return falcon.testing.TestClient(newsletter_app)
