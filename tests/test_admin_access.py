"""The admin area's users, sessions, login throttling and audit record (service layer), and
the ``newsletter-connector admin`` commands."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from argon2 import PasswordHasher
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.errors import InvalidRequest, NotFound, Unauthorized
from newsletter_connector.service.admin_access import LoginThrottled
from newsletter_connector.service.context import sha256_hex

from .support.admin import PASSWORD, T0

CLIENT = "c" * 64


def test_users_created_listed_and_deleted_with_hashed_passwords(service: Any) -> None:
    access = service.admin_access
    assert access.has_users() is False
    user = access.create_user("ada", PASSWORD)
    assert user.password_hash.startswith("$argon2id$")
    assert PASSWORD not in repr(user) and user.password_hash not in repr(user)
    assert access.has_users() is True
    with pytest.raises(InvalidRequest, match="already exists"):
        access.create_user("ada", PASSWORD)
    with pytest.raises(InvalidRequest) as short:
        access.create_user("bob", "x" * 11)
    assert short.value.field == "password"
    with pytest.raises(InvalidRequest) as blank:
        access.create_user(" ", PASSWORD)
    assert blank.value.field == "username"
    assert [u.username for u in access.list_users()] == ["ada"]
    session = access.login("ada", PASSWORD, client_hash=CLIENT)
    access.delete_user("ada")
    assert access.session(session.token) is None
    with pytest.raises(NotFound):
        access.delete_user("ada")


def test_login_stores_only_the_token_digest_and_audits(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    session = access.login("ada", PASSWORD, client_hash=CLIENT)
    assert len(session.token) >= 43 and session.token not in repr(session)
    with service.storage.transaction(write=False) as uow:
        assert uow.admin_sessions.get(session.token) is None
        stored = uow.admin_sessions.get(sha256_hex(session.token))
    assert stored.username == "ada" and stored.csrf_token == session.csrf_token
    [act] = service.admin_audit.latest(10)
    assert (act.actor, act.action, act.target, act.client_hash) == ("ada", "login", None, CLIENT)
    assert access.session(session.token).username == "ada"
    assert access.session("not-a-token") is None


def test_wrong_username_and_wrong_password_fail_alike(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for username, password in (("ada", "wrong password!"), ("nobody", PASSWORD)):
        with pytest.raises(Unauthorized) as caught:
            access.login(username, password, client_hash=CLIENT)
        assert caught.value.message == "wrong username or password"
    actions = [(act.actor, act.action) for act in service.admin_audit.latest(10)]
    assert actions == [("nobody", "login.failed"), ("ada", "login.failed")]


def test_sessions_expire_after_idle_or_absolute_time(service: Any, now: list[datetime]) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    idle = access.login("ada", PASSWORD, client_hash=CLIENT)
    now[0] = T0 + timedelta(hours=1, minutes=59)
    assert access.session(idle.token) is not None  # used: idle time starts again
    now[0] = T0 + timedelta(hours=3, minutes=58)
    assert access.session(idle.token) is not None
    now[0] = T0 + timedelta(hours=5, minutes=58)
    assert access.session(idle.token) is None
    now[0] = T0
    busy = access.login("ada", PASSWORD, client_hash=CLIENT)
    for hour in range(1, 12):
        now[0] = T0 + timedelta(hours=hour)
        assert access.session(busy.token) is not None
    now[0] = T0 + timedelta(hours=12)
    assert access.session(busy.token) is None
    with service.storage.transaction(write=False) as uow:
        assert uow.admin_sessions.get(sha256_hex(busy.token)) is None


def test_logout_deletes_the_session_and_audits(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    session = access.session(access.login("ada", PASSWORD, client_hash=CLIENT).token)
    access.logout(session, client_hash=CLIENT)
    with service.storage.transaction(write=False) as uow:
        assert uow.admin_sessions.get(session.token_digest) is None
    assert service.admin_audit.latest(1)[0].action == "logout"


def test_failed_logins_throttled_per_username(service: Any, now: list[datetime]) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for n in range(5):
        with pytest.raises(Unauthorized):
            access.login("ada", "wrong password!", client_hash=f"{n}" * 64)
    now[0] = T0 + timedelta(minutes=5)
    with pytest.raises(LoginThrottled) as caught:
        access.login("ada", PASSWORD, client_hash="f" * 64)  # even the right password
    assert caught.value.retry_after == 600
    now[0] = T0 + timedelta(minutes=15)
    assert access.login("ada", PASSWORD, client_hash="f" * 64).username == "ada"


def test_failed_logins_throttled_per_client(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for n in range(20):
        with pytest.raises(Unauthorized):
            access.login(f"user{n}", "wrong password!", client_hash=CLIENT)
    with pytest.raises(LoginThrottled):
        access.login("ada", PASSWORD, client_hash=CLIENT)
    assert access.login("ada", PASSWORD, client_hash="d" * 64).username == "ada"


def test_hash_with_old_parameters_is_replaced_at_login(service: Any) -> None:
    access = service.admin_access
    current = access.hasher
    access.hasher = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)
    old = access.create_user("ada", PASSWORD).password_hash
    access.hasher = current
    access.login("ada", PASSWORD, client_hash=CLIENT)
    [user] = access.list_users()
    assert user.password_hash != old and not current.check_needs_rehash(user.password_hash)
    current.verify(user.password_hash, PASSWORD)


def test_audit_latest_pages_by_keyset(service: Any) -> None:
    for n in range(5):
        service.admin_audit.record("ada", "api_key.create", f"key-{n}" + "x" * 300)
    page = service.admin_audit.latest(3)
    assert [act.target[:5] for act in page] == ["key-4", "key-3", "key-2"]
    assert all(len(act.target) == 200 for act in page)
    rest = service.admin_audit.latest(3, before_id=page[-1].id)
    assert [act.target[:5] for act in rest] == ["key-1", "key-0"]


@pytest.fixture
def run(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    env = {
        "NEWSLETTER_DATABASE_URL": newsletter_settings.database_url,
        "NEWSLETTER_BASE_URL": newsletter_settings.base_url,
        "NEWSLETTER_SITE_SECRET": newsletter_settings.site_secret.get_secret_value(),
        "NEWSLETTER_CONFIG": "",
    }

    def invoke(*args: str, stdin: str | None = None) -> Any:
        return CliRunner().invoke(cli, list(args), env=env, input=stdin)

    return invoke


def test_cli_create_list_and_delete_users(run: Any, newsletter_service: Any) -> None:
    created = run("admin", "create-user", "ada", stdin=PASSWORD + "\n")
    assert created.exit_code == 0, created.output
    assert "admin user 'ada' created" in created.output and PASSWORD not in created.output
    newsletter_service.admin_access.login("ada", PASSWORD, client_hash=CLIENT)
    listed = run("admin", "list-users")
    assert listed.exit_code == 0 and listed.output.startswith("ada\tcreated ")
    assert "argon2" not in listed.output
    duplicate = run("admin", "create-user", "ada", stdin=PASSWORD + "\n")
    assert duplicate.exit_code == 1 and "already exists" in duplicate.output
    short = run("admin", "create-user", "bob", stdin="short\n")
    assert short.exit_code == 1 and "at least 12 characters" in short.output
    deleted = run("admin", "delete-user", "ada")
    assert deleted.exit_code == 0 and "deleted" in deleted.output
    assert run("admin", "list-users").output == "no admin users\n"
    missing = run("admin", "delete-user", "ada")
    assert missing.exit_code == 1 and "no admin user 'ada'" in missing.output


def test_cli_prompts_twice_for_the_password_on_a_terminal(
    run: Any, newsletter_service: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts: list[dict[str, Any]] = []

    def prompt(text: str, **options: Any) -> str:
        prompts.append({"text": text, **options})
        return PASSWORD

    terminal = SimpleNamespace(stdin=SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr("newsletter_connector.cli.context.sys", terminal)
    monkeypatch.setattr("click.prompt", prompt)
    result = run("admin", "create-user", "ada")
    assert result.exit_code == 0, result.output
    assert prompts == [{"text": "Password", "hide_input": True, "confirmation_prompt": True}]
    assert newsletter_service.admin_access.login("ada", PASSWORD, client_hash=CLIENT)
