"""The user docs' configuration fragments and shown output that no shell runs: each is parsed
and what it claims is checked against the code (the command line's options, the settings'
fields, the entry-point group the package reads, the log line a traced hook call writes), and
the README's commands are the ones the suite runs. Then: no block of the user docs is left
``not-run``."""

from __future__ import annotations

import configparser
import logging
import re
import shlex
from typing import Any

import click
import pytest
import tomllib

from newsletter_connector import Settings, create_app, hookimpl
from newsletter_connector.cli import cli
from newsletter_connector.cli.serve import DEFAULT_WORKER_TIMEOUT
from newsletter_connector.descriptors import AdminUser
from newsletter_connector.plugin_manager import ENTRY_POINT_GROUP
from newsletter_connector.settings import CONFIG_ENV
from tests.support.docblocks import ROOT, all_blocks, docblock

#: The pages a newcomer reads (docs/contributing/ is the developers', docs/cli.md's help
#: blocks are generated from the command line and checked by tests/docs/test_reference_docs.py).
USER_DOCS = [
    ROOT / "README.md",
    *sorted(
        path
        for path in (ROOT / "docs").rglob("*.md")
        if "contributing" not in path.parts and path.name != "cli.md"
    ),
]


def test_no_block_of_the_user_docs_is_left_unrun() -> None:
    unrun = [
        f"{block.path.relative_to(ROOT)}:{block.line} ({block.not_run_reason})"
        for block in all_blocks()
        if block.path in USER_DOCS and block.name is None
    ]
    assert not unrun, f"user-doc blocks no test runs: {unrun}"


def command_line(argv: list[str]) -> click.Context:
    """The context the command line builds for ``newsletter-connector ARGV``: an unknown
    command or option, or a value out of range, fails as it would on the host."""
    context = cli.make_context("newsletter-connector", argv[:1], resilient_parsing=False)
    command = cli
    while isinstance(command, click.Group) and argv and argv[0] in command.commands:
        command, argv = command.commands[argv[0]], argv[1:]
        context = command.make_context(command.name, list(argv), parent=context)
    return context


@pytest.mark.parametrize("name", ["ops-systemd-web", "delivery-systemd-unit"])
def test_the_systemd_units_run_commands_that_exist(name: str) -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(docblock(name))
    service = unit["Service"]
    program, *argv = shlex.split(service["ExecStart"])
    assert program.endswith("/.venv/bin/newsletter-connector"), program
    context = command_line(argv)
    assert context.command.name in ("serve", "sync")
    if "Environment" in service:
        variable, _, value = service["Environment"].partition("=")
        assert variable == CONFIG_ENV and value.endswith(".toml"), service["Environment"]
    assert unit["Install"]["WantedBy"] == "multi-user.target"


def test_the_security_page_serve_line_is_valid_and_its_timeout_the_default() -> None:
    program, *argv = shlex.split(docblock("security-serve-timeout"))
    assert program == "newsletter-connector"
    context = command_line(argv)
    assert context.params["workers"] == 4
    assert context.params["timeout"] == DEFAULT_WORKER_TIMEOUT == 30


def test_the_import_command_s_general_form() -> None:
    form = shlex.split(docblock("importing-general-form"))
    assert form[:4] == ["newsletter-connector", "subscribers", "import", "FILE"]
    importer = cli.commands["subscribers"].commands["import"]  # type: ignore[attr-defined]
    (mode,) = [option for option in importer.params if option.name == "mode"]
    assert form[4:6] == ["[--mode", f"{'|'.join(mode.type.choices)}]"]
    assert importer.params[0].name == "file"


def test_the_pgbouncer_settings_are_settings() -> None:
    fragment = tomllib.loads(docblock("ops-pgbouncer"))
    settings = Settings(**fragment, site_secret="any-secret-for-the-settings-check-0123")
    assert settings.db_pgbouncer is True
    assert ":6432/" in settings.database_url


@pytest.mark.parametrize("name", ["plugins-entry-point", "issues-entry-point"])
def test_the_entry_point_tables_name_the_group_the_package_reads(name: str) -> None:
    metadata = tomllib.loads(docblock(name))
    ((group, entries),) = metadata["project"]["entry-points"].items()
    assert group == ENTRY_POINT_GROUP
    for value in entries.values():
        assert re.fullmatch(r"[A-Za-z_][\w.]*", value), value  # a module, as the examples are
    tested = tomllib.loads((ROOT / "tests/fixtures/sample_plugin_dist/pyproject.toml").read_text())
    assert ENTRY_POINT_GROUP in tested["project"]["entry-points"]


class Admins:
    """A site's admin hook, as plugins.md's traced line names it."""

    @hookimpl
    def newsletter_admin_user(self, environ: dict[str, Any]) -> AdminUser | None:
        return AdminUser(name="ada")


def test_the_traced_hook_line_is_what_a_traced_call_logs(
    newsletter_settings: Settings, newsletter_storage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    (shown,) = docblock("plugins-hook-trace").splitlines()
    caplog.set_level(logging.DEBUG, logger="newsletter_connector.hooks")
    settings = newsletter_settings.model_copy(update={"trace_hooks": True})
    app = create_app(settings, plugins=[Admins()])
    try:
        app.service.context.plugins.hook.newsletter_admin_user(environ={})
    finally:
        app.service.close()
    logged = [
        record.getMessage()
        for record in caplog.records
        if record.name == "newsletter_connector.hooks"
        and "newsletter_admin_user" in record.getMessage()
    ]
    # The page's plugin is my_site.admins; here it is this module's object.
    pattern = re.escape(shown).replace(re.escape("my_site.admins"), r"\S+")
    pattern = re.sub(r"\d+\\\.\d+", r"\\d+\\.\\d\\d", pattern)
    assert logged and re.fullmatch(pattern, logged[-1]), (pattern, logged)


def test_the_readme_commands_are_the_ones_the_suite_runs() -> None:
    quickstart = docblock("readme-quickstart")
    # The first-day walk and getting started repeat README command one word for word; its
    # quickstart is run by tests/cli/test_serve.py, its install is every run's.
    assert docblock("first-day-quickstart") == docblock("start-quickstart") == quickstart
    # README command two is what .ci/run finds in the README and runs.
    run = (ROOT / ".ci" / "run").read_text()
    (pattern,) = re.findall(r"grep -E '(\^scripts/install-system-deps[^']*)' README\.md", run)
    assert re.fullmatch(pattern, docblock("readme-tests").strip()), pattern
