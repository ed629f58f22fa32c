"""The standalone gunicorn example works (the mounted host site: tests/test_host_example.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx

from .support.docblocks import docblock
from .support.servers import serving
from .support.waiting import free_port
from .test_metrics import value

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
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


def test_standalone_example_under_gunicorn(newsletter_settings: Any, api_key: str) -> None:
    port = free_port()
    env = example_env(newsletter_settings, port)
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
    assert "long-lived objects frozen out of garbage collection" in output  # post_worker_init
    assert api_key not in output
    assert "SECRET" not in output


def test_standalone_example_sums_metrics_over_its_workers_and_logs_json(
    newsletter_settings: Any, tmp_path: Path
) -> None:
    """The example's gunicorn.conf.py does what ``serve`` does: a fresh multiprocess metrics
    directory (removed at exit) and the JSON logger."""
    port = free_port()
    token = "example-metrics-token-0123456789"
    env = example_env(
        newsletter_settings,
        port,
        NEWSLETTER_METRICS_TOKEN=token,
        NEWSLETTER_LOG_FORMAT="json",
        TMPDIR=str(tmp_path),
    )
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]
    with serving(
        command, probe_url=base + "/readyz", env=env, cwd=EXAMPLES / "standalone"
    ) as process:
        with httpx.Client(timeout=10) as client:
            for _ in range(20):
                assert client.get(base + "/healthz").status_code == 200
            scrapes = [
                client.get(base + "/metrics", headers={"Authorization": f"Bearer {token}"}).text
                for _ in range(4)
            ]
        (directory,) = tmp_path.glob("newsletter-metrics-*")
        assert len(list(directory.glob("counter_*.db"))) == 2
    ok = {"route": "/healthz", "method": "GET", "status_class": "2xx"}
    assert all(value(text, "newsletter_http_requests_total", **ok) == 20 for text in scrapes)
    assert not list(tmp_path.glob("newsletter-metrics-*"))
    assert process.stdout is not None
    lines = [line for line in process.stdout.read().splitlines() if line.strip()]
    assert all(json.loads(line)["level"] for line in lines)
    assert token not in "".join(lines)


def test_the_content_plugin_example_is_the_module_the_docs_quote() -> None:
    """docs/issues.md shows examples/content_plugin/newsletter_content.py verbatim (the runner
    runs it in tests/test_scheduled_digests.py)."""
    source = (EXAMPLES / "content_plugin" / "newsletter_content.py").read_text(encoding="utf-8")
    assert docblock("content-plugin") in source
