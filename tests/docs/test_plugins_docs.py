"""docs/plugins.md: registering a plugin object runs as written, and the host example's store
and its conformance test are shown whole, exactly as the files are."""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import pytest

from newsletter_connector import create_app
from newsletter_connector.storage.host import SubscriberRepository
from newsletter_connector.storage.unit_of_work import UnitOfWork
from tests.support.docblocks import ROOT, docblock, run_block, settings_environment


def test_registering_a_plugin_object(
    newsletter_settings: Any, newsletter_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_environment(monkeypatch, newsletter_settings)
    namespace = run_block("plugins-register")
    app, plugin = namespace["app"], namespace["my_plugin"]
    other = create_app()
    try:
        assert app.service.context.plugins.is_registered(plugin)
        # Each app has its own plugin manager: the other app never sees the plugin.
        assert not other.service.context.plugins.is_registered(plugin)
    finally:
        app.service.close()
        other.service.close()


@pytest.mark.parametrize(
    ("block", "source"),
    [
        ("plugins-host-conformance", "tests/storage/test_host_store_conformance.py"),
        ("plugins-host-store", "examples/wsgi_mount/host_store.py"),
    ],
)
def test_the_plugin_guide_shows_the_tested_module_whole(block: str, source: str) -> None:
    assert docblock(block) == (ROOT / source).read_text()


def test_the_guide_states_how_many_members_a_host_implements() -> None:
    members = [name for name in vars(SubscriberRepository) if not name.startswith("_")]
    guide = (ROOT / "docs" / "plugins.md").read_text()
    assert f"`SubscriberRepository`: **{len(members)} members**" in guide
    for name in members:
        assert f"`{name}" in guide.split("## Your own subscriber store", 1)[1], name


def test_the_guide_states_how_much_a_whole_backend_implements() -> None:
    """The comparison beside the host's count: every repository of the unit of work, their
    public members, the unit of work's properties and the backend's four own methods."""
    repositories = {
        name: get_type_hints(member.fget)["return"]
        for name, member in vars(UnitOfWork).items()
        if isinstance(member, property)
    }
    members = sum(
        1
        for protocol in repositories.values()
        for name, value in inspect.getmembers(protocol)
        if not name.startswith("_") and callable(value)
    )
    own = ("transaction", "check_ready", "migrate", "close")
    total = members + len(repositories) + len(own)
    guide = " ".join((ROOT / "docs" / "plugins.md").read_text().split())
    assert (
        f"implements {len(repositories)} repositories with {members} members, plus the unit of "
        f"work's {len(repositories)} properties and the backend's own methods (about {total} "
        "in all)"
    ) in guide
