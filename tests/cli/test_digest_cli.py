"""``newsletter-connector digest``: through click's CliRunner, and once as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from newsletter_connector.cli import cli
from newsletter_connector.errors import InvalidRequest
from newsletter_connector.model.issue import load_content
from newsletter_connector.testing.issue_samples import sample_issue_content

pytestmark = pytest.mark.system


@pytest.fixture
def env(newsletter_settings: Any, newsletter_storage: Any) -> dict[str, str]:
    """Settings for the command, on the (emptied after each test) test database."""
    return {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": "https://news.example.test/newsletter",
        "NEWSLETTER_SITE_NAME": "CLI News",
        "NEWSLETTER_POSTAL_ADDRESS": "2 Cli Road, Termtown",
        "NEWSLETTER_SITE_SECRET": "cli-test-secret-value",
        "NEWSLETTER_DELIVERY_MODE": "connector",
        "NEWSLETTER_CONFIG": "",
    }


@pytest.fixture
def content_file(tmp_path: Path) -> Path:
    path = tmp_path / "content.json"
    path.write_text(json.dumps(sample_issue_content()), encoding="utf-8")
    return path


def invoke(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, ["digest", *args], env=env, catch_exceptions=False)


@pytest.mark.parametrize("kind", ["daily", "weekly", "manual", "test"])
def test_every_kind_records_an_issue(
    env: dict[str, str], content_file: Path, newsletter_service: Any, kind: str
) -> None:
    result = invoke(env, "--kind", kind, "--date", "2026-11-21", "--content", str(content_file))
    assert result.exit_code == 0, result.output
    latest = newsletter_service.issues.latest()
    assert latest.kind == kind and latest.issue_date == "2026-11-21"
    assert result.stdout.splitlines()[:2] == [
        f"recorded {kind} issue {latest.id} for 2026-11-21: {latest.subject}",
        "queued newsletter.issue for the platform",
    ]
    # A test run also says what becomes of its event; the others print nothing more.
    assert len(result.stdout.splitlines()) == (3 if kind == "test" else 2)
    assert latest.subject.startswith("[TEST] CLI News" if kind == "test" else "CLI News")
    assert latest.postal_address == "2 Cli Road, Termtown"
    assert latest.sections == sample_issue_content()


def test_preview_writes_the_recorded_html(
    env: dict[str, str], content_file: Path, tmp_path: Path, newsletter_service: Any
) -> None:
    preview = tmp_path / "preview.html"
    result = invoke(
        env, "--kind", "test", "--content", str(content_file), "--preview", str(preview)
    )
    assert result.exit_code == 0, result.output
    assert f"preview written to {preview}" in result.stdout
    assert preview.read_text(encoding="utf-8") == newsletter_service.issues.latest().html


def test_second_daily_for_a_day_records_nothing(
    env: dict[str, str], content_file: Path, newsletter_service: Any
) -> None:
    args = ("--kind", "daily", "--date", "2026-11-21", "--content", str(content_file))
    assert invoke(env, *args).exit_code == 0
    again = invoke(env, *args)
    assert again.exit_code == 0  # safe in cron on several hosts
    assert again.stdout == ""
    assert "already recorded" in again.stderr and "nothing was recorded" in again.stderr
    assert len(newsletter_service.issues.list(10)) == 1


def test_site_mode_says_nothing_was_queued(
    env: dict[str, str], content_file: Path, newsletter_service: Any
) -> None:
    env = {**env, "NEWSLETTER_DELIVERY_MODE": "site"}
    result = invoke(env, "--kind", "manual", "--content", str(content_file))
    assert result.exit_code == 0
    assert "queued" not in result.stdout


def test_bad_content_names_the_field_and_records_nothing(
    env: dict[str, str], tmp_path: Path, newsletter_service: Any
) -> None:
    content = sample_issue_content()
    content["on_this_day"][1]["year"] = "1877"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    result = invoke(env, "--kind", "daily", "--content", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        "error: issue content: sections.on_this_day[1].year must be an integer\n"
    )
    assert newsletter_service.issues.list(10) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "issue content is not valid JSON (line 1, column 2"),
        ("", "issue content is not valid JSON (line 1, column 1"),
        ('{\n  "topics": ]', "issue content is not valid JSON (line 2, column 13"),
        ("null", "issue content must be an object"),
        ("[]", "issue content must be an object"),
    ],
)
def test_unreadable_content_file(
    env: dict[str, str], tmp_path: Path, newsletter_service: Any, text: str, message: str
) -> None:
    path = tmp_path / "content.json"
    path.write_text(text, encoding="utf-8")
    result = invoke(env, "--kind", "manual", "--content", str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: --content {path}: {message}")
    # the admin page's "Content (JSON)" field reports the same function's message
    with pytest.raises(InvalidRequest) as caught:
        load_content(text)
    assert result.stderr == f"error: --content {path}: {caught.value.message}\n"
    assert newsletter_service.issues.list(10) == []


def test_missing_content_file(env: dict[str, str], tmp_path: Path) -> None:
    result = invoke(env, "--kind", "manual", "--content", str(tmp_path / "nope.json"))
    assert result.exit_code == 1
    assert "error: --content" in result.stderr and "cannot read it" in result.stderr


def test_non_utf8_content_file(env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"puzzle_hint": "caf\xe9"}')
    result = invoke(env, "--kind", "manual", "--content", str(path))
    assert result.exit_code == 1 and "not UTF-8" in result.stderr


def test_bad_date(env: dict[str, str], content_file: Path) -> None:
    result = invoke(env, "--kind", "manual", "--date", "2026-02-30", "--content", str(content_file))
    assert result.exit_code == 1
    assert result.stderr == "error: date must be a real calendar date (YYYY-MM-DD)\n"


def test_bad_kind_is_a_usage_error(env: dict[str, str]) -> None:
    result = invoke(env, "--kind", "hourly")
    assert result.exit_code == 2
    assert "'hourly' is not one of 'daily', 'weekly', 'manual', 'test'" in result.stderr


def test_no_content_plugin_and_no_file(env: dict[str, str], newsletter_service: Any) -> None:
    result = invoke(env, "--kind", "daily")
    assert result.exit_code == 1
    assert "no plugin answered newsletter_issue_content" in result.stderr
    assert "--content FILE.json" in result.stderr


@pytest.mark.parametrize(
    ("where", "problem"),
    [("missing-dir/p.html", "does not exist"), ("a-file/p.html", "is not a directory")],
)
def test_unwritable_preview_fails_before_recording(
    env: dict[str, str],
    content_file: Path,
    tmp_path: Path,
    newsletter_service: Any,
    where: str,
    problem: str,
) -> None:
    (tmp_path / "a-file").write_text("not a directory", encoding="utf-8")
    preview = tmp_path / where
    result = invoke(
        env, "--kind", "daily", "--content", str(content_file), "--preview", str(preview)
    )
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: --preview {preview}: cannot write it (")
    assert problem in result.stderr and "nothing was recorded" in result.stderr
    assert newsletter_service.issues.list(10) == []
    with newsletter_service.storage.transaction(write=False) as uow:
        assert uow.outbox.status().unbatched == 0  # no newsletter.issue queued either
    # The daily period is still free: the same run with a writable preview records it.
    preview = tmp_path / "p.html"
    again = invoke(
        env, "--kind", "daily", "--content", str(content_file), "--preview", str(preview)
    )
    assert again.exit_code == 0, again.output
    assert preview.read_text(encoding="utf-8") == newsletter_service.issues.latest().html


def test_cron_line_runs_as_a_real_process(
    env: dict[str, str], content_file: Path, newsletter_service: Any
) -> None:
    """The documented cron alternative, as cron would run it (installed console script)."""
    script = Path(sys.executable).with_name("newsletter-connector")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "newsletter_connector"]
    argv = [*command, "digest", "--kind", "weekly", "--content", str(content_file)]
    full_env = {**os.environ, **env}
    first = subprocess.run(argv, env=full_env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("recorded weekly issue ")
    second = subprocess.run(argv, env=full_env, capture_output=True, text=True, timeout=60)
    assert second.returncode == 0 and "already recorded" in second.stderr
    assert [r.kind for r in newsletter_service.issues.list(10)] == ["weekly"]
