"""Shared test helpers. Database fixtures come from ``newsletter_connector.testing``."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from hypothesis import settings

# No command the suite runs reads a settings file of the developer's: an empty
# NEWSLETTER_CONFIG means none at all, not even the newsletter.toml that `quickstart` leaves in
# the checkout it was run in. A test that wants a settings file names it or removes this.
os.environ["NEWSLETTER_CONFIG"] = ""

#: pytest's own ``pytester`` (tests of the suite's rules) and shared fixtures: the admin area's
#: (``client``, ``service``, ``admin_user``, ``session``, ``now``), the browser tests' Chromium
#: (``browser``) and the export token's headers (``token_headers``).
pytest_plugins = [
    "pytester",
    "tests.support.admin",
    "tests.support.browser",
    "tests.support.openapi_checks",
]

#: The system tier: test modules that say ``pytestmark = pytest.mark.system`` on a line of
#: their own. They drive real processes (gunicorn, the command line, sync runners, Chromium, a
#: private PostgreSQL server), run thousands of generated cases, migrate databases down and up,
#: assert on timings, or read the whole repository (docs build, import graph, source scans). A
#: plain ``pytest`` leaves them out without importing them (collecting some costs more than
#: running a quick module); ``pytest --all`` and CI run them. A slow test in a quick module is
#: marked ``pytest.mark.system`` itself.
SYSTEM_MODULE = re.compile(r"^pytestmark = .*\bpytest\.mark\.system\b", re.MULTILINE)


def marks_itself_system(path: Path) -> bool:
    """Whether the test module at ``path`` puts all its tests in the system tier."""
    return path.suffix == ".py" and SYSTEM_MODULE.search(path.read_text()) is not None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run long variants too")
    parser.addoption(
        "--all", action="store_true", help="run the system tier too, as CI does (see SYSTEM_MODULE)"
    )


def runs_quick_tier_only(config: pytest.Config) -> bool:
    """A plain run: neither ``--all`` nor a ``-m`` expression (``-m system`` is the system tier)."""
    return not (config.getoption("--all") or config.getoption("markexpr"))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    # Before xdist reads it. Workers pay off for the quick tier, which is CPU-bound; a run of
    # named test files would spend longer starting them than testing. The system tier's tests
    # wait on servers, subprocesses and clocks, and assert on timings: it runs in one process.
    # ``-n`` on the command line overrides both.
    given = config.invocation_params.args
    if any(arg.startswith(("-n", "--numprocesses")) for arg in given):
        return
    named_files = any(".py" in arg for arg in config.args)
    if hasattr(config.option, "numprocesses") and (named_files or not runs_quick_tier_only(config)):
        config.option.numprocesses = 0


#: Hypothesis profiles (``tests/support/examples.py``): the quick tier runs a quarter of each
#: property test's examples (25 where a test names no count), CI and the system tier all of them.
settings.register_profile("quick", max_examples=25)
settings.register_profile("ci", max_examples=100)


def pytest_configure(config: pytest.Config) -> None:
    # Before any test module is imported: their @settings read the profile.
    if config.getoption("hypothesis_profile", None):
        return  # hypothesis's own --hypothesis-profile, loaded by its plugin
    full = os.environ.get("HYPOTHESIS_PROFILE") == "ci" or not runs_quick_tier_only(config)
    settings.load_profile("ci" if full else "quick")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # Not even imported: collecting some of them costs more than running a quick test module.
    name = collection_path.name
    if name.startswith("test_") and runs_quick_tier_only(config):
        return marks_itself_system(collection_path) or None
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if runs_quick_tier_only(config):
        return "quick tier: system-tier modules left out (--all runs them)"
    return None


#: A test parametrized over more cases than this sweeps one rule across them (every path, every
#: field, every spelling): the quick tier runs every fourth case, the system tier the others, as
#: the quick tier runs a quarter of each property test's examples.
SWEEP_CASES = 8


def mark_sweep_remainders(items: list[pytest.Item]) -> None:
    """Mark ``system`` all but every fourth case of each sweep (see :data:`SWEEP_CASES`)."""
    sweeps: dict[tuple[Any, ...], list[pytest.Item]] = defaultdict(list)
    for item in items:
        if isinstance(item, pytest.Function) and hasattr(item, "callspec"):
            sweeps[(item.path, item.cls, item.originalname)].append(item)
    for cases in sweeps.values():
        if len(cases) > SWEEP_CASES:
            for index, item in enumerate(cases):
                if index % 4:
                    item.add_marker(pytest.mark.system)


#: A test marked ``database_independent`` checks the same thing whichever database the run is
#: pointed at: it uses none, or a private PostgreSQL server of its own (``private_postgres``),
#: or a SQLite file it names. CI runs the system tier's such tests once, in a job of their own,
#: rather than once per database (``.ci/run``); ``pytest --all`` runs them as any other test.
DATABASE_INDEPENDENT = "database_independent"


def misplaced_database_independent(items: list[pytest.Item]) -> list[str]:
    """The node ids of tests marked :data:`DATABASE_INDEPENDENT` that take the run's database
    (``newsletter_storage``, which every service and app fixture builds on)."""
    return [
        item.nodeid
        for item in items
        if item.get_closest_marker(DATABASE_INDEPENDENT) is not None
        and "newsletter_storage" in getattr(item, "fixturenames", ())
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    misplaced = misplaced_database_independent(items)
    if misplaced:
        raise pytest.UsageError(
            f"marked {DATABASE_INDEPENDENT} but take the run's database: {', '.join(misplaced)}"
        )
    mark_sweep_remainders(items)
    if runs_quick_tier_only(config):
        quick = [item for item in items if "system" not in item.keywords]
        config.hook.pytest_deselected(items=[item for item in items if "system" in item.keywords])
        items[:] = quick
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long variant: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


#: argon2id at its cheapest: a hash costs about a millisecond instead of the library default's
#: tens (64 MiB of memory, three passes), which every signed-in admin test pays twice.
CHEAP_HASHER = partial(PasswordHasher, time_cost=1, memory_cost=8, parallelism=1)


@pytest.fixture(autouse=True)
def cheap_password_hashes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The admin login hashes passwords with :data:`CHEAP_HASHER` in every test in this
    process, except those marked ``argon2_default_cost``, which prove the real cost."""
    if request.node.get_closest_marker("argon2_default_cost") is None:
        monkeypatch.setattr(
            "newsletter_connector.service.admin_access.PasswordHasher", CHEAP_HASHER
        )


@pytest.fixture(scope="session")
def session_database_engine(newsletter_database_url: str) -> Iterator[Any]:
    """One engine on the session database, for the checks between tests."""
    from newsletter_connector.plugins.sql_store.engine import make_engine

    engine = make_engine(newsletter_database_url)
    yield engine
    engine.dispose()


@pytest.fixture(autouse=True)
def session_database_left_empty(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test that leaves rows in the session database: only ``newsletter_storage``
    empties it after a test, and rows left behind would surface in whichever test the same
    worker runs next. A test that takes ``newsletter_storage`` is not checked: that fixture
    empties every table after it."""
    names = request.fixturenames
    if "newsletter_database_url" not in names or "newsletter_storage" in names:
        yield
        return
    engine = request.getfixturevalue("session_database_engine")
    yield
    from newsletter_connector.testing.databases import tables_with_rows

    with engine.connect() as connection:
        left = tables_with_rows(connection)
    assert not left, f"rows left in {left}: take the newsletter_storage fixture, which empties them"


@pytest.fixture
def private_postgres() -> Iterator[Any]:
    """A private PostgreSQL server (``tests.support.pgcluster.PrivatePostgres``), started; destroyed
    after the test, so a staged outage never touches the shared server."""
    from tests.support.pgcluster import PrivatePostgres

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
def server_storage(newsletter_service: Any) -> Any:
    """The service's store on a database server (PostgreSQL, MySQL, MariaDB): SQLite writers
    take turns (``BEGIN IMMEDIATE``), so no insert is ever in flight beside another
    transaction there."""
    storage = newsletter_service.storage
    if storage.dialect == "sqlite":
        pytest.skip("a database server only: SQLite writers take turns, so no insert is in flight")
    return storage


@pytest.fixture
def postgres_storage(newsletter_service: Any) -> Any:
    """The service's store, PostgreSQL only: for how PostgreSQL keeps a rule (its advisory
    locks, its one-statement signup, its shared statements); MySQL and MariaDB keep the same
    rules by other means (tests taking ``server_storage`` check the rules on every server)."""
    storage = newsletter_service.storage
    if storage.dialect != "postgresql":
        pytest.skip("how PostgreSQL keeps the rule (tests with server_storage check the rule)")
    return storage
