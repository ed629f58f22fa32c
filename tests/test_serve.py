"""The service under gunicorn in a real subprocess: serving, revocation across workers, and the
README's quickstart command."""

from __future__ import annotations

import gc
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from .support.servers import running

STATUS = "/api/newsletter/v1/status"


def test_revoked_key_is_refused_by_every_worker(
    newsletter_settings: Any, newsletter_service: Any
) -> None:
    key = newsletter_service.admin.create_api_key("gunicorn").key
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "serve-test-secret",
    }
    with running(["serve", "--workers", "2"], env=env) as (base, _process):
        headers = {"Authorization": f"Bearer {key}"}
        # Fresh connections, so requests spread over both workers.
        for _ in range(10):
            response = httpx.get(base + STATUS, headers=headers)
            assert response.status_code == 200
            assert response.json() == {"ok": True, "version": "v1", "key": "gunicorn"}
        newsletter_service.admin.revoke_api_key("gunicorn")
        for _ in range(20):
            response = httpx.get(base + STATUS, headers=headers)
            assert response.status_code == 401
            assert response.json()["error"] == "unauthorized"


def test_serve_refuses_an_unmigrated_database(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "newsletter_connector", "serve", "--bind", "127.0.0.1:1"],
        env={
            "NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
            "NEWSLETTER_BASE_URL": "https://news.example.test",
            "PATH": "",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "newsletter-connector db upgrade" in result.stderr
    assert "Traceback" not in result.stderr


def test_quickstart_prints_a_working_curl_line(tmp_path: Path) -> None:
    """README command one: a fresh directory, SQLite, a printed key and curl line that work."""
    env = {"NEWSLETTER_CONFIG": "", "NEWSLETTER_DATABASE_URL": "", "NEWSLETTER_BASE_URL": ""}
    with running(["quickstart"], env=env, cwd=tmp_path, probe_path=STATUS) as (base, process):
        lines: list[str] = []
        assert process.stdout is not None
        while not any("curl" in line for line in lines):
            lines.append(process.stdout.readline())
        curl = next(line for line in lines if "curl" in line)
        # It serves plain http links only because it says so, for its own local address.
        assert any(line.startswith("WARNING: local trial") and base in line for line in lines)
        match = re.search(r"Bearer (nlk_[\w-]+)' (\S+)", curl)
        assert match, curl
        key, url = match.groups()
        assert url == base + STATUS
        response = httpx.get(url, headers={"Authorization": f"Bearer {key}"})
        assert response.json() == {"ok": True, "version": "v1", "key": "quickstart"}
    assert (tmp_path / "newsletter.db").exists()


def test_serve_workers_freeze_the_app_they_loaded(
    newsletter_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``serve`` (and the standalone example's config, see test_examples) runs
    ``freeze_loaded_app`` in each worker once its app is built."""
    from newsletter_connector import gunicorn_app

    options: dict[str, Any] = {}
    monkeypatch.setattr(gunicorn_app._Server, "run", lambda server: options.update(server.options))
    gunicorn_app.run(newsletter_settings, bind="127.0.0.1:0", workers=1)
    assert options["post_worker_init"] is gunicorn_app.freeze_loaded_app

    logged: list[str] = []
    worker = SimpleNamespace(log=SimpleNamespace(info=lambda msg, *a: logged.append(msg % a)))
    try:
        gunicorn_app.freeze_loaded_app(worker)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert "frozen out of garbage collection" in logged[0]
