"""The service under gunicorn in a real subprocess: serving, revocation across workers, the
README's quickstart command, and the settings file it leaves for the commands run after it."""

from __future__ import annotations

import gc
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from tests.support.docblocks import ROOT, docblock
from tests.support.servers import running

pytestmark = pytest.mark.system

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


def test_two_instances_on_one_host_share_no_control_socket(
    newsletter_settings: Any, tmp_path: Path
) -> None:
    """gunicorn's control socket defaults to one path per user: ``serve`` turns it off, so a
    second instance neither takes it over from the first nor has it removed under it."""
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "serve-test-secret",
        "HOME": str(tmp_path),  # where gunicorn puts the socket without XDG_RUNTIME_DIR
        "XDG_RUNTIME_DIR": "",
    }
    with (
        running(["serve", "--workers", "1"], env=env) as (first, _),
        running(["serve", "--workers", "1"], env=env) as (second, _),
    ):
        for base in (first, second):
            assert httpx.get(base + STATUS).status_code == 401
        assert list(tmp_path.rglob("*.ctl")) == []
    quickstart_env = {
        **env,
        "NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'quick.db'}",
        "NEWSLETTER_BASE_URL": "",
        "NEWSLETTER_CONFIG": "",
    }
    with running(["quickstart"], env=quickstart_env, cwd=tmp_path, probe_path=STATUS):
        assert list(tmp_path.rglob("*.ctl")) == []


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


def test_every_command_names_the_settings_file_it_read_and_serve_warns_of_http_links(
    tmp_path: Path,
) -> None:
    """A newsletter.toml left in the working directory is read by every command: each says
    so on stderr (its output on stdout untouched), and ``serve`` also warns that the
    development setting allowing http links is on, before it starts (here it then refuses the
    unmigrated database)."""
    settings_file = tmp_path / "newsletter.toml"
    settings_file.write_text(
        'database_url = "sqlite:///left.db"\n'
        'base_url = "http://127.0.0.1:9"\n'
        "allow_insecure_http_links = true\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "SYSTEMROOT": os.environ.get("SYSTEMROOT", "")}

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "newsletter_connector", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    named = f"settings read from {settings_file.resolve()}\n"
    served = command("serve", "--bind", "127.0.0.1:1")
    assert served.returncode == 1
    assert served.stderr.startswith(
        named + "WARNING: allow_insecure_http_links is on (file newsletter.toml key "
        "allow_insecure_http_links): a development setting, mailed links may be plain http\n"
    ), served.stderr
    assert "newsletter-connector db upgrade" in served.stderr

    upgraded = command("db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stderr == named
    assert upgraded.stdout.startswith("database created")
    assert command("db", "upgrade", "--help").stderr == ""  # nothing read, nothing said

    # Another, unmigrated database again, so that serve stops after its warnings.
    settings_file.write_text(
        settings_file.read_text().replace("left.db", "other.db") + 'log_format = "json"\n'
    )
    served = command("serve", "--bind", "127.0.0.1:1")
    assert served.returncode == 1
    records = [json.loads(line) for line in served.stderr.splitlines()]
    assert records[0]["message"] == named.strip() and records[0]["level"] == "INFO"
    assert records[1]["level"] == "WARNING"
    assert "allow_insecure_http_links is on" in records[1]["message"]


def test_quickstart_prints_a_working_curl_line(tmp_path: Path) -> None:
    """README command one: a fresh directory, SQLite, a printed key and curl line that work.
    Its install steps are the install every run of the suite stands on; its last command is
    run here, as the README spells it."""
    *_, command = docblock("readme-quickstart").strip().split(" && ")
    program, *args = shlex.split(command)
    assert program == ".venv/bin/newsletter-connector", command
    env = {"NEWSLETTER_CONFIG": "", "NEWSLETTER_DATABASE_URL": "", "NEWSLETTER_BASE_URL": ""}
    with running(args, env=env, cwd=tmp_path, probe_path=STATUS) as (base, process):
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


def test_quickstart_runs_a_sync_runner_and_says_where_the_admin_area_is(tmp_path: Path) -> None:
    """A bulk act asked for while quickstart serves is done without a second command: the
    runner beside the app leaves its heartbeat and works through it. quickstart names the
    admin area's address and the command that makes its first owner."""
    from newsletter_connector.service import NewsletterService
    from newsletter_connector.settings import Settings
    from newsletter_connector.storage.subscriber_query import SubscriberFilter
    from newsletter_connector.testing.subscriber_samples import make_subscriber_data
    from tests.support.waiting import wait_until

    env = {"NEWSLETTER_CONFIG": "", "NEWSLETTER_DATABASE_URL": "", "NEWSLETTER_BASE_URL": ""}
    with running(["quickstart"], env=env, cwd=tmp_path, probe_path=STATUS) as (base, process):
        lines: list[str] = []
        assert process.stdout is not None
        while not any("sync runner runs beside the app" in line for line in lines):
            lines.append(process.stdout.readline())
        assert f"Admin area: {base}/admin\n" in lines
        assert any("newsletter-connector admin create-user NAME" in line for line in lines)
        settings = Settings.load(
            {
                "NEWSLETTER_DATABASE_URL": f"sqlite:///{tmp_path / 'newsletter.db'}",
                "NEWSLETTER_BASE_URL": base,
                "NEWSLETTER_ALLOW_INSECURE_HTTP_LINKS": "true",
            }
        )
        service = NewsletterService.build(settings)
        try:
            with service.storage.transaction() as uow:
                for name in ("ann", "bob"):
                    uow.subscribers.add(make_subscriber_data(f"{name}@example.org"))
            job = service.subscriber_jobs.start(
                "unsubscribe",
                SubscriberFilter(),
                filter_text="",
                requested_by="ada",
                expected=2,
                expected_exact=True,
            )
            assert wait_until(lambda: service.subscriber_jobs.get(job.id).finished_at, 30)
            assert service.subscriber_jobs.get(job.id).changed == 2
            assert not service.runner_status.seen().quiet
        finally:
            service.close()


def test_serve_workers_freeze_the_app_they_loaded(
    newsletter_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``serve`` (and the standalone example's config, see test_examples) runs
    ``freeze_loaded_app`` in each worker once its app is built."""
    from newsletter_connector import gunicorn_app

    options: dict[str, Any] = {}
    monkeypatch.setattr(gunicorn_app._Server, "run", lambda server: options.update(server.options))
    gunicorn_app.run(newsletter_settings, bind="127.0.0.1:0", workers=1, timeout=30)
    assert options["post_worker_init"] is gunicorn_app.freeze_loaded_app
    assert options["control_socket_disable"] is True

    logged: list[str] = []
    worker = SimpleNamespace(log=SimpleNamespace(info=lambda msg, *a: logged.append(msg % a)))
    try:
        gunicorn_app.freeze_loaded_app(worker)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert "frozen out of garbage collection" in logged[0]


@pytest.fixture
def no_newsletter_environment(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of someone who exported nothing: no ``NEWSLETTER_*`` variable at all
    (not even the suite's blank ``NEWSLETTER_CONFIG``), so a command finds its settings file
    the way a user's would. Returned for the subprocesses."""
    for name in list(os.environ):
        if name.startswith("NEWSLETTER_"):
            monkeypatch.delenv(name)
    return dict(os.environ)


def run_readme_line(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One command of the README as printed, ``.venv/bin/`` being this environment's."""
    args = shlex.split(line)
    assert args[0] == ".venv/bin/newsletter-connector", line
    args[0] = str(Path(sys.executable).parent / "newsletter-connector")
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def output_to_curl_line(process: Any) -> str:
    """quickstart's output up to its curl line (which holds a working key)."""
    assert process.stdout is not None
    lines: list[str] = []
    while not any(line.lstrip().startswith("curl ") for line in lines):
        lines.append(process.stdout.readline())
    assert re.search(r"Bearer nlk_[\w-]+'", lines[-1]), lines
    return "".join(lines)


def test_quickstart_leaves_settings_that_the_readme_next_steps_use(
    tmp_path: Path, no_newsletter_environment: dict[str, str]
) -> None:
    """README command one, then its next steps as printed, in the same folder, nothing exported:
    ``keys create`` and ``digest --content`` find quickstart's database and address, and so do
    ``serve`` and ``sync`` afterwards."""
    env = no_newsletter_environment
    samples = tmp_path / "examples" / "standalone"
    samples.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "standalone" / "sample-content.json", samples)
    with running(["quickstart"], env={}, cwd=tmp_path, probe_path=STATUS) as (base, process):
        output = output_to_curl_line(process)
        assert "settings written to newsletter.toml" in output
        written = tmp_path / "newsletter.toml"
        text = written.read_text()
        assert f'base_url = "{base}"' in text
        assert 'database_url = "sqlite:///newsletter.db"' in text
        flag = next(line for line in text.splitlines() if "allow_insecure_http_links" in line)
        assert flag.startswith("allow_insecure_http_links = true") and "DEVELOPMENT ONLY" in flag
        assert "site_secret" not in text
        assert stat.S_IMODE(written.stat().st_mode) == 0o600

        keys_line, digest_line = docblock("readme-next-steps").strip().splitlines()
        keys = run_readme_line(keys_line, tmp_path, env)
        assert keys.returncode == 0, keys.stderr
        key = re.search(r"nlk_[\w-]+", keys.stdout)
        assert key, keys.stdout
        headers = {"Authorization": f"Bearer {key.group(0)}"}
        status = httpx.get(base + STATUS, headers=headers)
        assert status.json() == {"ok": True, "version": "v1", "key": "my-client"}

        digest = run_readme_line(digest_line, tmp_path, env)
        assert digest.returncode == 0, digest.stderr
        assert "recorded test issue" in digest.stdout
        assert "A first test issue" in (tmp_path / "issue.html").read_text()
        latest = httpx.get(base + "/api/newsletter/v1/issues/latest", headers=headers)
        assert latest.status_code == 200, latest.text
        assert latest.json()["subject"] == "[TEST] A first test issue"
    assert written.read_text() == text  # a served quickstart leaves it as written

    sync = subprocess.run(
        [sys.executable, "-m", "newsletter_connector", "sync", "--once"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert sync.returncode == 0, sync.stderr  # without the file: base_url is required
    assert "no connection configured" in sync.stdout
    with running(["serve"], env={}, cwd=tmp_path, probe_path=STATUS) as (served, _process):
        assert httpx.get(served + STATUS, headers=headers).json()["key"] == "my-client"


def test_quickstart_never_overwrites_a_settings_file(
    tmp_path: Path, no_newsletter_environment: dict[str, str]
) -> None:
    """An existing newsletter.toml is read, kept byte for byte, and quickstart says so (and
    that its http base_url is not the address it serves)."""
    mine = (
        "# my own settings\n"
        'database_url = "sqlite:///mine.db"\n'
        'site_name = "Kept"\n'
        'base_url = "http://127.0.0.1:9"\n'
        "allow_insecure_http_links = true\n"
    )
    (tmp_path / "newsletter.toml").write_text(mine)
    with running(["quickstart"], env={}, cwd=tmp_path, probe_path=STATUS) as (_base, process):
        output = output_to_curl_line(process)
    assert (tmp_path / "newsletter.toml").read_text() == mine
    assert (tmp_path / "mine.db").exists() and not (tmp_path / "newsletter.db").exists()
    assert "settings read from newsletter.toml (left as it is)" in output
    # Its http base_url is not the address served: said, as the development setting is.
    assert "WARNING: local trial: readers' links would be plain http (http://127.0.0.1:9)" in output
    assert "WARNING: base_url http://127.0.0.1:9 (file newsletter.toml key base_url)" in output


def test_gunicorn_hands_other_spellings_of_admin_paths_to_the_unknown_path(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    """The WSGI server decodes ``%2F`` and keeps ``//``: whatever reaches the app that the
    router would take for an admin page is refused before it, the area off as here."""
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test",
        "NEWSLETTER_SITE_SECRET": "serve-test-secret",
    }
    with running(["serve", "--workers", "1"], env=env) as (base, _process):
        unknown = httpx.get(base + "/no-such-path")
        assert unknown.status_code == 404
        for path in ("//admin/settings", "/%2Fadmin/settings", "/admin//settings", "///admin"):
            for method in ("OPTIONS", "GET", "POST"):
                result = httpx.request(method, base + path)
                assert result.status_code == 404, (method, path)
                assert "allow" not in result.headers, (method, path)
                if method == "GET":
                    assert result.content == unknown.content, path
