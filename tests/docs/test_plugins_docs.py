"""docs/plugins.md: registering a plugin object runs as written, and the host example's store
and its conformance test are shown whole, exactly as the files are."""

from __future__ import annotations

from typing import Any

import pytest

from newsletter_connector import create_app
from newsletter_connector.storage.host import SubscriberRepository
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
