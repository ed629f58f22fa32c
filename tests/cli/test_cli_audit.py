"""The command line's admin acts are in the admin audit log too, as the admin area records the
same acts (action and target alike), their actor the operating-system user followed by
"(command line)"; reading commands record nothing, and no secret reaches the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.cli.context import command_line_actor
from newsletter_connector.service.events import subscriber_key
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support.admin import audit_acts

LISTSOURCE_KEY = "listsource-key-0123456789abcdef"
TOKEN = "platform-token-0123456789abcdef"
PASSWORD = "a long enough password"


@pytest.fixture
def run(newsletter_service: Any, newsletter_settings: Any, monkeypatch: Any) -> Any:
    """Run a command against ``newsletter_service``; its output, after checking it succeeded."""
    monkeypatch.setattr(
        "newsletter_connector.cli.context.CliState.service",
        lambda _state, **_options: newsletter_service,
    )
    monkeypatch.setattr(
        "newsletter_connector.cli.context.CliState.settings",
        lambda _state, **_options: newsletter_settings,
    )

    def invoke(*args: str, stdin: str | None = None) -> str:
        result = CliRunner().invoke(cli, list(args), input=stdin)
        assert result.exit_code == 0, result.output
        return result.output

    return invoke


def test_every_act_of_the_command_line_is_audited_like_its_admin_twin(
    run: Any, newsletter_service: Any, tmp_path: Path
) -> None:
    service = newsletter_service
    for address in ("a@example.org", "b@example.org"):
        service.subscribers.subscribe({"email": address})
    content = tmp_path / "content.json"
    content.write_text(json.dumps(sample_issue_content()), encoding="utf-8")

    run("keys", "create", "--label", "site backend")
    run("keys", "revoke", "site backend")
    run("listsource", "set-credentials", "--user", "platform", stdin=LISTSOURCE_KEY + "\n")
    run("listsource", "disable")
    run("connection", "set", "--platform-base", "https://platform.example", "--transport",
        "events", stdin=TOKEN + "\n")  # fmt: skip
    run("connection", "disable")
    run("outbox", "retry-now")
    run("outbox", "replay", "--all")
    run("subscribers", "unsubscribe", "a@example.org")
    run("subscribers", "bounce", "b@example.org")
    run("admin", "create-user", "grace", stdin=PASSWORD + "\n")
    run("admin", "delete-user", "grace")
    run("digest", "--kind", "test", "--content", str(content))
    run("erase", "b@example.org")
    issue = service.issues.latest()
    erased = subscriber_key(service.context, "b@example.org")

    assert audit_acts(service)[::-1] == [
        ("api_key.create", "site backend"),
        ("api_key.revoke", "site backend"),
        ("listsource.set", "platform"),
        ("listsource.disable", "turned off"),
        ("connection.set", "https://platform.example via events"),
        ("connection.disable", "disabled"),
        ("outbox.retry_now", "0 batch(es)"),
        ("outbox.replay", "0 failed batch(es)"),
        ("subscriber.unsubscribe", "a@example.org"),
        ("subscriber.bounce", erased),  # the erasure rewrote the address to its keyed hash
        ("admin_user.create", "grace"),
        ("admin_user.delete", "grace"),
        ("issue.digest", f"test issue {issue.id}"),
        ("subscriber.erase", erased),
    ]
    acts = service.admin_audit.latest(20)
    actor = command_line_actor()
    assert actor.endswith(" (command line)") and {act.actor for act in acts} == {actor}
    assert {act.client_hash for act in acts} == {None}
    logged = repr(acts)
    assert LISTSOURCE_KEY not in logged and TOKEN not in logged and PASSWORD not in logged


def test_reading_commands_record_nothing(run: Any, newsletter_service: Any) -> None:
    newsletter_service.subscribers.subscribe({"email": "a@example.org"})
    for command in (
        ["keys", "list"],
        ["listsource", "show"],
        ["connection", "show"],
        ["outbox", "status"],
        ["outbox", "failed"],
        ["subscribers", "show", "a@example.org"],
        ["admin", "list-users"],
    ):
        run(*command)
    assert audit_acts(newsletter_service) == []


def test_without_a_login_name_the_actor_still_says_command_line(monkeypatch: Any) -> None:
    def no_login() -> str:
        raise OSError("no login name")

    monkeypatch.setattr("getpass.getuser", no_login)
    assert command_line_actor() == "unknown user (command line)"
