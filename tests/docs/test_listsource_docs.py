"""docs/listsource.md's Python example: the credentials it sets switch the surface on and
authenticate the platform; the example runs standalone against the test database."""

from __future__ import annotations

import base64
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from tests.support.docblocks import run_block, settings_environment

HEALTH = "/api/listsource/api/health"


def test_setting_credentials_from_python(
    newsletter_settings: Any, newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = falcon.testing.TestClient(create_app(service=newsletter_service))
    assert client.simulate_get(HEALTH).status_code == 404  # off until credentials exist
    settings_environment(monkeypatch, newsletter_settings)
    namespace = run_block("listsource-credentials")
    namespace["service"].close()
    good = base64.b64encode(f"platform:{namespace['key']}".encode()).decode()
    assert (
        client.simulate_get(HEALTH, headers={"Authorization": f"Basic {good}"}).status == "200 OK"
    )
    wrong = base64.b64encode(b"platform:not-the-key-0123").decode()
    assert (
        client.simulate_get(HEALTH, headers={"Authorization": f"Basic {wrong}"}).status_code == 401
    )
