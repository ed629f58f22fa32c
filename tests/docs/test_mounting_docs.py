"""The mounting guides work as written: each snippet runs in a fresh site of its framework."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import falcon.testing
import httpx
import pytest

from tests.support.docblocks import docblock
from tests.support.servers import serving
from tests.support.waiting import free_port

STATUS = "/newsletter/api/newsletter/v1/status"


@pytest.fixture
def newsletter_env(newsletter_settings: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment a site would set: where the database is, and the site secret."""
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_SITE_SECRET": "mount-test-secret",
        "NEWSLETTER_CONFIG": "",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def run_block(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"docs_{name.replace('-', '_')}"}
    exec(compile(docblock(name), f"<docs:{name}>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("name", ["mount-plain-wsgi", "mount-werkzeug"])
def test_plain_wsgi_and_werkzeug(
    name: str, newsletter_env: dict[str, str], auth: dict[str, str]
) -> None:
    client = falcon.testing.TestClient(run_block(name)["application"])
    assert client.simulate_get("/").text == "the host site"
    status = client.simulate_get(STATUS, headers=auth)
    assert status.json == {"ok": True, "version": "v1", "key": "tests"}


def test_flask(newsletter_env: dict[str, str], auth: dict[str, str]) -> None:
    app = run_block("mount-flask")["app"]
    client = app.test_client()
    assert "/newsletter/signup" in client.get("/").get_data(as_text=True)
    response = client.get(STATUS, headers=auth)
    assert response.get_json() == {"ok": True, "version": "v1", "key": "tests"}


@pytest.mark.system  # a real gunicorn
def test_fresh_django_project_under_gunicorn(
    tmp_path: Path, newsletter_env: dict[str, str], api_key: str
) -> None:
    subprocess.run(
        [sys.executable, "-m", "django", "startproject", "mysite", str(tmp_path)],
        check=True,
        timeout=120,
    )
    (tmp_path / "mysite" / "wsgi.py").write_text(docblock("mount-django"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "mysite.wsgi"]
    with serving(command, probe_url=base + STATUS, env=newsletter_env, cwd=tmp_path):
        status = httpx.get(base + STATUS, headers={"Authorization": f"Bearer {api_key}"})
        assert status.json() == {"ok": True, "version": "v1", "key": "tests"}
        # Django still serves everything else (its admin login page exists in a fresh project).
        admin = httpx.get(base + "/admin/login/", headers={"Host": "localhost"})
        assert admin.status_code == 200 and "Django" in admin.text


def test_readme_mount_snippet(newsletter_env: dict[str, str], auth: dict[str, str]) -> None:
    client = falcon.testing.TestClient(run_block("readme-mount")["application"])
    assert client.simulate_get("/").text == "your site"
    assert client.simulate_get(STATUS, headers=auth).json["key"] == "tests"


def test_plugin_guide_content_hook(newsletter_settings: Any) -> None:
    from newsletter_connector.plugin_manager import build_plugin_manager

    namespace = run_block("plugin-issue-content")
    plugin = type("DocsPlugin", (), {})()
    plugin.newsletter_issue_content = namespace["newsletter_issue_content"]
    pm = build_plugin_manager([plugin], load_entry_points=False)
    daily = pm.hook.newsletter_issue_content(
        kind="daily", date="2026-11-21", settings=newsletter_settings
    )
    assert daily["briefing"]["date"] == "2026-11-21"
    assert (
        pm.hook.newsletter_issue_content(
            kind="test", date="2026-11-21", settings=newsletter_settings
        )
        is None
    )
