"""The ``trace_hooks`` setting: each plugin hook call is logged at DEBUG on the
``newsletter_connector.hooks`` logger with its plugins, result count and time, and never with
its arguments (the settings, a request's cookies)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import hookimpl
from newsletter_connector.descriptors import AdminUser, OutboundTransport
from newsletter_connector.plugin_manager import build_plugin_manager
from newsletter_connector.settings import Settings
from newsletter_connector.web.app import create_app

LOGGER = "newsletter_connector.hooks"
SESSION_SECRET = "host-session-cookie-never-logged"


class HostAdmins:
    """A host plugin signing every request in as ``ada`` (its name is the plugin's)."""

    __name__ = "host_admins"

    @hookimpl
    def newsletter_admin_user(self, environ: dict[str, Any]) -> AdminUser | None:
        return AdminUser(name="ada")


def traced(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


@pytest.fixture
def app(newsletter_settings: Settings, newsletter_storage: Any) -> Iterator[Any]:
    settings = newsletter_settings.model_copy(update={"trace_hooks": True})
    app = create_app(settings, plugins=[HostAdmins()])
    yield app
    app.service.storage.close()


def test_each_hook_call_is_logged_with_its_plugins_and_result_count(
    newsletter_settings: Settings, newsletter_storage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    settings = newsletter_settings.model_copy(update={"trace_hooks": True})
    app = create_app(settings, plugins=[HostAdmins()])
    app.service.storage.close()
    lines = traced(caplog)
    assert re.fullmatch(
        r"hook newsletter_storage_backends: 1 result from "
        r"newsletter_connector\.plugins\.sql_store in \d+\.\d\d ms",
        lines[0],
    )
    assert any(
        line.startswith(
            "hook newsletter_issue_renderers: 1 result from "
            "newsletter_connector.plugins.html_renderer in "
        )
        for line in lines
    )


def test_a_request_traces_the_host_hook_without_its_arguments(
    app: Any, newsletter_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    client = falcon.testing.TestClient(app)
    page = client.simulate_get("/admin", headers={"Cookie": f"host_session={SESSION_SECRET}"})
    assert page.status_code == 200
    assert any(
        line.startswith("hook newsletter_admin_user: 1 result from host_admins in ")
        for line in traced(caplog)
    )
    secret = newsletter_settings.site_secret.get_secret_value()  # type: ignore[union-attr]
    assert SESSION_SECRET not in caplog.text
    assert secret not in caplog.text


def test_a_raising_hook_is_logged_by_the_exception_type_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        __name__ = "broken_transports"

        @hookimpl
        def newsletter_outbound_transports(self) -> list[OutboundTransport]:
            raise RuntimeError("a message that may hold anything")

    caplog.set_level(logging.DEBUG, logger=LOGGER)
    pm = build_plugin_manager(
        [Broken()], load_entry_points=False, settings=Settings.load({}, trace_hooks=True)
    )
    with pytest.raises(RuntimeError):
        pm.hook.newsletter_outbound_transports()
    [line] = traced(caplog)
    assert line.startswith("hook newsletter_outbound_transports: raised RuntimeError from ")
    assert "broken_transports" in line
    assert "may hold anything" not in caplog.text


def test_hook_calls_are_not_traced_by_default(
    newsletter_settings: Settings, newsletter_storage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    app = create_app(newsletter_settings, plugins=[HostAdmins()])
    try:
        assert falcon.testing.TestClient(app).simulate_get("/admin").status_code == 200
    finally:
        app.service.storage.close()
    assert traced(caplog) == []
