"""Tracing is optional: in a Python whose imports of ``opentelemetry`` fail (as without the
``otel`` extra), the app, the store and the sync runner work with tracing off and never import
it; with tracing on, start-up fails naming the setting and the extra. Real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.util import find_spec
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

BLOCKER = '''
import importlib.abc
import sys


class NoOpenTelemetry(importlib.abc.MetaPathFinder):
    """Imports of opentelemetry fail, as when the otel extra is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoOpenTelemetry())
'''

SCENARIO = """
import json
import sys

import falcon.testing
import httpx

import no_opentelemetry  # noqa: F401
from newsletter_connector import NewsletterService, Settings, create_app
from newsletter_connector.sync.runner import SyncRunner

try:
    import opentelemetry  # noqa: F401
except ModuleNotFoundError:
    blocked = True
else:
    blocked = False
settings = Settings(
    database_url=sys.argv[1],
    base_url="https://news.example.test/newsletter",
    site_secret="optional-tracing-test-secret",
)
service = NewsletterService.build(settings)
service.storage.migrate()
key = service.admin.create_api_key("optional").key
client = falcon.testing.TestClient(create_app(service=service))
statuses = [
    client.simulate_get("/signup").status_code,
    client.simulate_post(
        "/api/newsletter/v1/subscribers",
        json={"email": "optional@example.org"},
        headers={"Authorization": f"Bearer {key}"},
    ).status_code,
]
service.admin.set_connection(
    platform_base="https://platform.example.test", transport="events", token="t" * 24
)
runner = SyncRunner(
    service, http_transport=lambda: httpx.MockTransport(lambda request: httpx.Response(200))
)
delivered = runner.run_once().delivered_events
runner.close()
print(json.dumps({
    "blocked": blocked,
    "statuses": statuses,
    "delivered": delivered,
    "imported": sorted(name for name in sys.modules if name.startswith("opentelemetry")),
}))
"""


@pytest.fixture
def blocked_python(tmp_path: Path) -> dict[str, str]:
    """The environment of a Python that cannot import ``opentelemetry`` once it imports
    ``no_opentelemetry`` (written to ``tmp_path``)."""
    assert find_spec("opentelemetry") is not None, "the test needs opentelemetry installed"
    (tmp_path / "no_opentelemetry.py").write_text(BLOCKER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSLETTER_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    return env


def test_with_tracing_off_nothing_imports_opentelemetry(
    tmp_path: Path, blocked_python: dict[str, str]
) -> None:
    script = tmp_path / "scenario.py"
    script.write_text(textwrap.dedent(SCENARIO), encoding="utf-8")
    database = f"sqlite:///{tmp_path / 'optional.db'}"
    done = subprocess.run(
        [sys.executable, str(script), database],
        env=blocked_python,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {"blocked": True, "statuses": [200, 201], "delivered": 1, "imported": []}


def test_with_tracing_on_and_no_opentelemetry_start_up_names_the_setting_and_the_extra(
    tmp_path: Path, blocked_python: dict[str, str]
) -> None:
    env = {
        **blocked_python,
        "NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'on.db'}",
        "NEWSLETTER_TRACING": "on",
    }
    command = (
        "import sys, no_opentelemetry; sys.argv[0] = 'newsletter-connector'; "
        "from newsletter_connector.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", command, "db", "upgrade"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "setting tracing (NEWSLETTER_TRACING) is on" in done.stderr
    assert "pip install 'newsletter-connector[otel]'" in done.stderr
    assert not (tmp_path / "on.db").exists()
