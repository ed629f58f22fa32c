"""The browser tests' Chromium and site: headless Chromium (Debian's ``chromium`` package)
driven by Playwright, and the app served by gunicorn in a subprocess for it to visit.

The ``browser`` fixture is registered for every test module by ``tests/conftest.py``. It
FAILS, never skips, when Chromium is missing: install it with ``apt-get install -y chromium``
(``scripts/install-system-deps`` does).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.admin import PASSWORD
from tests.support.servers import running

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1000, "height": 800}
#: The served site's secret (the keyed hashes its rows carry are made with it).
SITE_SECRET = "browser-test-secret"
SITE_NAME = "Senior News Today"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, one for the test module."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@contextmanager
def private_service(directory: Path) -> Iterator[tuple[str, Any]]:
    """A migrated SQLite file of its own in ``directory`` and a ``NewsletterService`` on it,
    with the served site's secret: for browser walks that check pages, not a database, and
    so run once per CI run (``database_independent``). Yields its URL and the service."""
    from newsletter_connector.plugins.sql_store import BuiltinSqlStorage
    from newsletter_connector.plugins.sql_store.engine import make_engine
    from newsletter_connector.plugins.sql_store.migrate import upgrade
    from newsletter_connector.service import NewsletterService
    from newsletter_connector.settings import Settings

    url = f"sqlite:///{directory / 'site.db'}"
    engine = make_engine(url)
    upgrade(engine)
    settings = Settings(
        database_url=url, base_url="https://news.example.test/newsletter", site_secret=SITE_SECRET
    )
    service = NewsletterService.build(settings, storage=BuiltinSqlStorage(engine))
    try:
        yield url, service
    finally:
        service.storage.close()


@pytest.fixture(scope="module")
def own_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A site of the test module's own (:func:`private_service` served by :func:`served_site`):
    its base URL and the service on its database. For walks that check pages, not a database:
    they run once per CI run (``database_independent``)."""
    with (
        private_service(tmp_path_factory.mktemp("site")) as (url, service),
        served_site(url) as base,
    ):
        yield base, service


@contextmanager
def served_site(database_url: str, **env: str) -> Iterator[str]:
    """The app under gunicorn (2 workers) on ``database_url``, with ``env`` added to its
    environment; its base URL. ``base_url`` defaults to the bound (http) address, which the
    development setting allows, so the browser can follow the pages' links. Its log goes to
    a file: a walk of many pages logs more than a pipe holds, and a full pipe stops the
    workers mid-request."""
    environment = {
        "NEWSLETTER_CONFIG": "",
        "NEWSLETTER_BASE_URL": "",
        "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",
        "NEWSLETTER_TEMPLATE_DIR": "",
        "NEWSLETTER_DATABASE_URL": database_url,
        "NEWSLETTER_SITE_SECRET": SITE_SECRET,
        "NEWSLETTER_SITE_NAME": SITE_NAME,
        **env,
    }
    with (
        tempfile.TemporaryDirectory() as logs,
        running(
            ["serve", "--workers", "2"],
            env=environment,
            probe_path="/signup",
            log_path=Path(logs) / "serve.log",
        ) as (base, _),
    ):
        yield base


@contextmanager
def scriptless_tab(browser: Any) -> Iterator[Any]:
    """A page in a new browser context with JavaScript off (as the pages need none) and a
    20-second timeout; the context is closed afterwards."""
    context = browser.new_context(java_script_enabled=False, viewport=VIEWPORT)
    context.set_default_timeout(20_000)
    try:
        yield context.new_page()
    finally:
        context.close()


def sign_in(page: Any, site: str, *, path: str = "/admin", username: str = "ada") -> None:
    """Open ``path`` (which shows the login form), sign in as ``username`` with
    :data:`~tests.support.admin.PASSWORD` and land on the dashboard."""
    page.goto(site + path)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    assert page.locator("h1").inner_text() == "Dashboard"
