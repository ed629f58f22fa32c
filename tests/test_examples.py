"""The shipped examples work: the mounted host site and the standalone gunicorn setup."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import falcon.testing
import httpx

from .conftest import free_port
from .servers import serving

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STATUS = "/api/newsletter/v1/status"


def load_example(relative: str) -> ModuleType:
    path = EXAMPLES / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wsgi_mount_serves_host_and_newsletter(newsletter_settings: Any, api_key: str) -> None:
    host = load_example("wsgi_mount/host_site.py")
    settings = newsletter_settings.model_copy(
        update={"base_url": "https://host.example/newsletter"}
    )
    client = falcon.testing.TestClient(host.make_site(settings))
    home = client.simulate_get("/")
    assert home.status_code == 200 and "Host home" in home.text
    status = client.simulate_get(
        "/newsletter" + STATUS, headers={"Authorization": f"Bearer {api_key}"}
    )
    assert status.json == {"ok": True, "version": "v1", "key": "tests"}
    # Outside the prefix the newsletter app is not reachable; inside it, its own 404s apply.
    assert client.simulate_get(STATUS).status_code == 404
    missing = client.simulate_get("/newsletter/api/newsletter/v1/missing")
    assert missing.json["error"] == "not_found"


def test_standalone_example_under_gunicorn(newsletter_settings: Any, api_key: str) -> None:
    port = free_port()
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "standalone-secret",
        "NEWSLETTER_BIND": f"127.0.0.1:{port}",
        "NEWSLETTER_WORKERS": "2",
    }
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]
    with serving(command, probe_url=base + STATUS, env=env, cwd=EXAMPLES / "standalone") as process:
        response = httpx.get(base + STATUS, headers={"Authorization": f"Bearer {api_key}"})
        assert response.json() == {"ok": True, "version": "v1", "key": "tests"}
        httpx.get(base + "/confirm/SECRET-LINK-TOKEN?also=SECRET-QUERY")
    assert process.stdout is not None
    output = process.stdout.read()
    # The access log shows the path, never a query string (where tokens could travel).
    assert "GET /api/newsletter/v1/status" in output
    assert "GET /confirm/[redacted]" in output
    assert api_key not in output
    assert "SECRET" not in output
