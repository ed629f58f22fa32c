"""Shared test helpers. Database fixtures come from ``newsletter_connector.testing``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

# No command the suite runs reads a settings file of the developer's: an empty
# NEWSLETTER_CONFIG means none at all, not even the newsletter.toml that `quickstart` leaves in
# the checkout it was run in. A test that wants a settings file names it or removes this.
os.environ["NEWSLETTER_CONFIG"] = ""

#: Shared fixtures: the admin area's (``client``, ``service``, ``admin_user``, ``session``,
#: ``now``) and the browser tests' Chromium (``browser``).
pytest_plugins = ["tests.support.admin", "tests.support.browser"]

#: Test modules that drive real processes (gunicorn, the command line, sync runners, Chromium,
#: a private PostgreSQL server) or thousands of generated cases. They make the system tier, which
#: a plain ``pytest`` leaves out (the quick tier takes about a minute) and ``pytest --all`` and
#: CI run.
SYSTEM_TIER = frozenset(
    {
        "test_access_log.py",
        "test_admin_browser.py",
        "test_admin_browser_settings.py",
        "test_admin_browser_dashboard.py",
        "test_admin_browser_subscribers.py",
        "test_admin_browser_twins.py",
        "test_asgi_server.py",
        "test_bench_smoke.py",
        "test_chunked_bodies_server.py",
        "test_database_errors.py",
        "test_digest_cli.py",
        "test_feedback_server.py",
        "test_host_example.py",
        "test_https_addresses.py",
        "test_hung_database.py",
        "test_listsource_server.py",
        "test_observability_server.py",
        "test_outage.py",
        "test_pages_browser.py",
        "test_pgbouncer.py",
        "test_reliability_bad_input.py",
        "test_reliability_crash.py",
        "test_reliability_security.py",
        "test_serve.py",
        "test_slow_clients.py",
        "test_sync_cli.py",
        "test_sync_tls.py",
        "test_tracing_optional.py",
        "test_tracing_servers.py",
        "test_wheel_install.py",
        "test_without_extras.py",
    }
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run long variants too")
    parser.addoption(
        "--all", action="store_true", help="run the system tier too, as CI does (see SYSTEM_TIER)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SYSTEM_TIER:
            item.add_marker(pytest.mark.system)
    if not (config.getoption("--all") or config.getoption("markexpr")):
        quick = [item for item in items if "system" not in item.keywords]
        config.hook.pytest_deselected(items=[item for item in items if item not in quick])
        items[:] = quick
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long variant: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def private_postgres() -> Iterator[Any]:
    """A private PostgreSQL server (``tests.support.pgcluster.PrivatePostgres``), started; destroyed
    after the test, so a staged outage never touches the shared server."""
    from .support.pgcluster import PrivatePostgres

    server = PrivatePostgres()
    server.start()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def api_key(newsletter_service: Any) -> str:
    """A fresh Newsletter API key labelled ``tests``."""
    return str(newsletter_service.admin.create_api_key("tests").key)


@pytest.fixture
def auth(api_key: str) -> dict[str, str]:
    """Headers authenticating as ``api_key``."""
    return {"Authorization": f"Bearer {api_key}"}


@pytest.fixture
def pg_storage(newsletter_service: Any) -> Any:
    """The service's store, PostgreSQL only: SQLite writers take turns (``BEGIN IMMEDIATE``),
    so no insert is ever in flight beside another transaction there."""
    storage = newsletter_service.storage
    if storage.dialect != "postgresql":
        pytest.skip("PostgreSQL only: SQLite writers take turns, so no insert is ever in flight")
    return storage
