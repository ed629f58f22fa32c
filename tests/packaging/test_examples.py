"""The standalone gunicorn example works (the mounted host site:
tests/packaging/test_host_example.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.docblocks import docblock
from tests.support.paths import ROOT
from tests.support.servers import serving
from tests.support.waiting import free_port

EXAMPLES = ROOT / "examples"
STATUS = "/api/newsletter/v1/status"


def example_env(settings: Any, port: int, **extra: str) -> dict[str, str]:
    """The standalone example's environment: ``settings``' database, two workers on ``port``."""
    return {
        "NEWSLETTER_DATABASE_URL": settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "standalone-secret",
        "NEWSLETTER_BIND": f"127.0.0.1:{port}",
        "NEWSLETTER_WORKERS": "2",
        **extra,
    }


@pytest.mark.system  # a real gunicorn
def test_standalone_example_under_gunicorn(
    newsletter_settings: Any, api_key: str, tmp_path: Path
) -> None:
    port = free_port()
    # HOME: where gunicorn's control socket would go (without XDG_RUNTIME_DIR).
    env = example_env(newsletter_settings, port, HOME=str(tmp_path), XDG_RUNTIME_DIR="")
    base = f"http://127.0.0.1:{port}"
    # The standalone page's command, from the checkout's root, gunicorn taking the shell's place.
    block = docblock("gunicorn-standalone").strip()
    assert block == "cd examples/standalone && gunicorn -c gunicorn.conf.py wsgi:app", block
    command = ["bash", "-c", block.replace("&& gunicorn", "&& exec gunicorn")]
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    with serving(command, probe_url=base + STATUS, env=env, cwd=EXAMPLES.parent) as process:
        response = httpx.get(base + STATUS, headers={"Authorization": f"Bearer {api_key}"})
        assert response.json() == {"ok": True, "version": "v1", "key": "tests"}
        httpx.get(base + "/confirm/SECRET-LINK-TOKEN?also=SECRET-QUERY")
        assert list(tmp_path.rglob("*.ctl")) == []  # its control socket is off
    assert process.stdout is not None
    output = process.stdout.read()
    # The access log shows the path, never a query string (where tokens could travel).
    assert "GET /api/newsletter/v1/status" in output
    assert "GET /confirm/[redacted]" in output
    assert "long-lived objects frozen out of garbage collection" in output  # post_worker_init
    assert api_key not in output
    assert "SECRET" not in output


def test_the_content_plugin_example_is_the_module_the_docs_quote() -> None:
    """docs/issues.md shows examples/content_plugin/newsletter_content.py verbatim (the runner
    runs it in tests/sync/test_scheduled_digests.py)."""
    source = (EXAMPLES / "content_plugin" / "newsletter_content.py").read_text(encoding="utf-8")
    assert docblock("content-plugin") in source
