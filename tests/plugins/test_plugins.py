"""The plugin system: hooks, selection by name, per-app managers, entry-point discovery."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pluggy
import pytest

from newsletter_connector import NewsletterService, hookimpl, hookspecs, plugin_manager
from newsletter_connector.descriptors import (
    IssueRenderer,
    OutboundTransport,
    SubscriberStore,
)
from newsletter_connector.errors import PluginNotFound
from newsletter_connector.plugin_manager import (
    build_plugin_manager,
    distribution_of,
    issue_renderers,
    outbound_transports,
    pick,
    storage_backends,
)
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.subscribers import SqlSubscribers
from tests.support.paths import ROOT

SAMPLE_DIST = ROOT / "tests" / "fixtures" / "sample_plugin_dist"


class EveryHookPlugin:
    """Implements every hook, to check each is called and combined as documented."""

    def __init__(self) -> None:
        self.content_calls: list[tuple[str, str]] = []

    @hookimpl
    def newsletter_storage_backends(self) -> list[SubscriberStore]:
        return [
            SubscriberStore("sql", "shadows the built-in", SqlSubscribers),
            SubscriberStore("crm", "the host's CRM table", SqlSubscribers),
        ]

    @hookimpl
    def newsletter_issue_renderers(self) -> list[IssueRenderer]:
        return [IssueRenderer("plain", "plain text in a <pre>", lambda issue, settings: "<pre/>")]

    @hookimpl
    def newsletter_outbound_transports(self) -> list[OutboundTransport]:
        return [OutboundTransport("log", "writes events to a log", lambda conn, client: None)]

    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        self.content_calls.append((kind, date))
        return {"puzzle_hint": "from the plugin"}


class DeclinesContent:
    @hookimpl(tryfirst=True)
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> None:
        return None


def test_each_hook_is_called_and_combined() -> None:
    plugin = EveryHookPlugin()
    pm = build_plugin_manager([plugin, DeclinesContent()], load_entry_points=False)
    # A plugin offering a built-in's name is seen first: built-ins are trylast.
    assert (
        pick("storage backend", storage_backends(pm), "sql").description == "shadows the built-in"
    )
    assert {s.name for s in storage_backends(pm)} == {"sql", "crm"}
    assert "plain" in {r.name for r in issue_renderers(pm)}
    assert "log" in {t.name for t in outbound_transports(pm)}
    # firstresult: the declining plugin's None is skipped, the next answer wins.
    content = pm.hook.newsletter_issue_content(kind="daily", date="2026-11-21", settings=None)
    assert content == {"puzzle_hint": "from the plugin"}
    assert plugin.content_calls == [("daily", "2026-11-21")]


def test_unknown_name_asks_whether_the_plugin_is_installed(newsletter_settings: Any) -> None:
    settings = newsletter_settings.model_copy(update={"storage_backend": "redis"})
    with pytest.raises(
        PluginNotFound, match=r"unknown storage backend 'redis'.*is the plugin installed\?"
    ):
        NewsletterService.build(settings)


def test_an_unknown_storage_backend_names_the_setting_and_the_installed_ones(
    newsletter_settings: Any,
) -> None:
    settings = newsletter_settings.model_copy(update={"storage_backend": "crm"})
    with pytest.raises(
        PluginNotFound,
        match=r"setting storage_backend .*unknown storage backend 'crm' \(available: sql\)",
    ):
        NewsletterService.build(settings)


class CrmStore:
    """A host's subscriber store, recording what the SQL store asks of it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def factory(self, connection: Any) -> SqlSubscribers:
        self.calls.append("factory")
        return SqlSubscribers(connection)

    @hookimpl
    def newsletter_storage_backends(self) -> list[SubscriberStore]:
        return [
            SubscriberStore(
                "crm",
                "the host's CRM table",
                self.factory,
                check_ready=lambda engine: self.calls.append("check_ready"),
                migrate=lambda engine: self.calls.append("migrate"),
            )
        ]


def test_the_sql_store_builds_subscribers_with_the_selected_store(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    crm = CrmStore()
    settings = newsletter_settings.model_copy(update={"storage_backend": "crm"})
    service = NewsletterService.build(settings, plugins=[crm])
    try:
        storage = service.context.storage
        assert isinstance(storage, SqlStorage) and storage.subscriber_store.name == "crm"
        storage.migrate()
        storage.check_ready()
        service.subscribers.list_page()
        assert crm.calls == ["migrate", "check_ready", "factory"]
    finally:
        service.close()


def test_plugin_managers_are_per_app() -> None:
    with_plugin = build_plugin_manager([EveryHookPlugin()], load_entry_points=False)
    without = build_plugin_manager(load_entry_points=False)
    assert "log" in {t.name for t in outbound_transports(with_plugin)}
    assert "log" not in {t.name for t in outbound_transports(without)}


def test_plugin_with_unknown_hook_is_rejected() -> None:
    class Typo:
        @hookimpl
        def newsletter_storage_backend(self) -> list[Any]:  # missing "s"
            return []

    with pytest.raises(pluggy.PluginValidationError):
        build_plugin_manager([Typo()], load_entry_points=False)


def test_installed_plugins_are_read_once_per_process_and_each_manager_registers_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class FakeDist:
        name, version = "nc-fake", "2.0"

    class FakeEntryPoint:
        name, dist = "fake", FakeDist()

        def load(self) -> Any:
            return plugin

    plugin = EveryHookPlugin()
    reads: list[str] = []

    def entry_points(*, group: str) -> list[Any]:
        reads.append(group)
        return [FakeEntryPoint()]

    monkeypatch.setattr(plugin_manager, "entry_points", entry_points)
    plugin_manager.installed_entry_points.cache_clear()
    try:
        first, second = build_plugin_manager(), build_plugin_manager()
        assert reads == ["newsletter_connector"]
        assert first.get_plugin("fake") is plugin and second.get_plugin("fake") is plugin
        assert distribution_of("fake").name == "nc-fake"
        assert distribution_of("newsletter_connector.plugins.sql_store") is None
    finally:
        plugin_manager.installed_entry_points.cache_clear()


@pytest.mark.system  # pip installs a distribution in a subprocess
def test_separately_installed_distribution_is_discovered(tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(SAMPLE_DIST),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    result = subprocess.run(
        [sys.executable, "-m", "newsletter_connector", "plugins"],
        env={"PYTHONPATH": str(target), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "sample (nc-sample-plugin 1.0)" in result.stdout
    assert "sample-renderer: renders a one-line issue" in result.stdout


def _hook_names() -> list[str]:
    return [name for name in dir(hookspecs) if name.startswith("newsletter_")]


def test_every_hook_is_documented_and_tested() -> None:
    hooks = _hook_names()
    assert len(hooks) >= 4
    docs = (ROOT / "docs" / "plugins.md").read_text()
    tests = (
        "".join(
            path.read_text()
            for path in (ROOT / "tests").rglob("test_*.py")
            if path.name != "test_plugins.py"
        )
        + _impls_in_this_module()
    )
    for hook in hooks:
        assert f"`{hook}" in docs, f"{hook} is not documented in docs/plugins.md"
        assert hook in tests, f"{hook} has no test"
        assert getattr(hookspecs, hook).__doc__, f"{hook} has no docstring"


def _impls_in_this_module() -> str:
    """Hook names implemented by the plugins above, which the tests above exercise."""
    tree = ast.parse(Path(__file__).read_text())
    return " ".join(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name.startswith("newsletter_")
    )
