"""The admin area's users, sessions, login throttling and audit record (service layer), and
the ``newsletter-connector admin`` commands."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from argon2 import PasswordHasher, extract_parameters
from click.testing import CliRunner

from newsletter_connector.cli import cli
from newsletter_connector.errors import InvalidRequest, NotFound, Unauthorized
from newsletter_connector.service.admin_access import (
    MAX_FAILURES_PER_CLIENT,
    MAX_FAILURES_PER_USER,
    UNKNOWN_USER_ACTOR,
    LoginThrottled,
)
from newsletter_connector.service.context import sha256_hex
from newsletter_connector.testing.threads import run_together
from tests.support.admin import PASSWORD, T0

CLIENT = "c" * 64
OTHER_CLIENT = "d" * 64


class CountingHasher(PasswordHasher):
    """An argon2id hasher noting every password it verifies (from any thread). Its parameters
    are cheap: the tests that use it count checks, and the service's own hasher is checked for
    cost by ``test_users_created_listed_and_deleted_with_hashed_passwords``."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8192, parallelism=1)
        self.checked: list[str] = []

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        self.checked.append(str(password))  # list.append is atomic
        return super().verify(hash, password)


@pytest.fixture
def hasher(service: Any) -> CountingHasher:
    """Installed as the admin access service's hasher (the decoy hash is made with it)."""
    service.admin_access.hasher = CountingHasher()
    return service.admin_access.hasher


def refused(service: Any, username: str, password: str, client_hash: str = CLIENT) -> str:
    """The name of what ``login`` raised: ``Unauthorized`` or ``LoginThrottled``."""
    with pytest.raises((Unauthorized, LoginThrottled)) as caught:
        service.admin_access.login(username, password, client_hash=client_hash)
    return type(caught.value).__name__


@pytest.mark.argon2_default_cost
def test_users_created_listed_and_deleted_with_hashed_passwords(service: Any) -> None:
    access = service.admin_access
    assert access.has_users() is False
    user = access.create_user("ada", PASSWORD)
    assert user.password_hash.startswith("$argon2id$")
    cost = extract_parameters(user.password_hash)  # memory-hard: at least OWASP's 19 MiB, t=2
    assert cost.memory_cost >= 19 * 1024 and cost.time_cost >= 2
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
    assert actions == [(UNKNOWN_USER_ACTOR, "login.failed"), ("ada", "login.failed")]


def test_a_password_typed_as_the_username_is_never_audited(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    with pytest.raises(Unauthorized):
        access.login(PASSWORD, "", client_hash=CLIENT)
    [act] = service.admin_audit.latest(10)
    assert (act.actor, act.action, act.target) == ("(unknown user)", "login.failed", None)
    assert PASSWORD not in repr(act)
    with pytest.raises(InvalidRequest):  # no user can be named like the marker
        access.create_user(UNKNOWN_USER_ACTOR, PASSWORD)


def test_an_unknown_username_costs_and_counts_as_a_wrong_password(
    service: Any, hasher: CountingHasher
) -> None:
    access = service.admin_access
    stored = access.create_user("ada", PASSWORD).password_hash
    for username in ("ada", "nobody"):
        outcomes = [refused(service, username, f"guess {n}") for n in range(6)]
        assert outcomes == ["Unauthorized"] * 5 + ["LoginThrottled"]
    # One argon2 check per failed attempt, none for a refused one, with equal parameters.
    assert hasher.checked == [f"guess {n}" for n in range(5)] * 2
    assert extract_parameters(access._decoy_hash) == extract_parameters(stored)


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


@pytest.mark.usefixtures("hasher")
def test_failures_from_other_clients_never_lock_a_username_out(
    service: Any, now: list[datetime]
) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for window in range(3):  # an attacker repeating every window locks nobody out
        now[0] = T0 + window * timedelta(minutes=15)
        for n in range(MAX_FAILURES_PER_USER):
            assert refused(service, "ada", "wrong password!", f"{n}" * 64) == "Unauthorized"
        assert access.login("ada", PASSWORD, client_hash=CLIENT).username == "ada"


@pytest.mark.usefixtures("hasher")
def test_failed_logins_throttled_per_username_from_one_client(
    service: Any, now: list[datetime]
) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for _ in range(MAX_FAILURES_PER_USER):
        assert refused(service, "ada", "wrong password!") == "Unauthorized"
    now[0] = T0 + timedelta(minutes=5)
    with pytest.raises(LoginThrottled) as caught:
        access.login("ada", PASSWORD, client_hash=CLIENT)  # even the right password
    assert caught.value.retry_after == 600
    assert refused(service, "bob", "wrong password!") == "Unauthorized"  # another username
    assert access.login("ada", PASSWORD, client_hash=OTHER_CLIENT).username == "ada"
    now[0] = T0 + timedelta(minutes=15)
    assert access.login("ada", PASSWORD, client_hash=CLIENT).username == "ada"


@pytest.mark.usefixtures("hasher")
def test_failed_logins_throttled_per_client(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for n in range(MAX_FAILURES_PER_CLIENT):
        assert refused(service, f"user{n}", "wrong password!") == "Unauthorized"
    with pytest.raises(LoginThrottled):
        access.login("ada", PASSWORD, client_hash=CLIENT)
    assert access.login("ada", PASSWORD, client_hash=OTHER_CLIENT).username == "ada"


@pytest.mark.usefixtures("hasher")
def test_a_successful_sign_in_clears_its_count_and_is_no_failure(service: Any) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    for _ in range(MAX_FAILURES_PER_USER - 1):
        assert refused(service, "ada", "wrong password!") == "Unauthorized"
    access.login("ada", PASSWORD, client_hash=CLIENT)
    outcomes = [refused(service, "ada", "wrong password!") for _ in range(6)]
    assert outcomes == ["Unauthorized"] * MAX_FAILURES_PER_USER + ["LoginThrottled"]
    # Signing in never uses up the client's allowance for failures.
    access.create_user("bob", PASSWORD)
    for n in range(MAX_FAILURES_PER_CLIENT - 1):
        assert refused(service, f"user{n}", "wrong password!", OTHER_CLIENT) == "Unauthorized"
    for _ in range(3):
        assert access.login("bob", PASSWORD, client_hash=OTHER_CLIENT).username == "bob"
    assert refused(service, "nobody", "wrong password!", OTHER_CLIENT) == "Unauthorized"
    assert refused(service, "bob", PASSWORD, OTHER_CLIENT) == "LoginThrottled"


@pytest.mark.parametrize(
    ("username_of", "attempts", "limit"),
    [
        (lambda n: "ada", 20, MAX_FAILURES_PER_USER),
        (lambda n: "nobody", 20, MAX_FAILURES_PER_USER),
        (lambda n: f"user{n}", 30, MAX_FAILURES_PER_CLIENT),
    ],
    ids=["known-username", "unknown-username", "any-username"],
)
def test_parallel_guesses_get_no_more_password_checks_than_the_limit(
    service: Any, hasher: CountingHasher, username_of: Any, attempts: int, limit: int
) -> None:
    service.admin_access.create_user("ada", PASSWORD)
    numbers = itertools.count()  # next() on it is atomic

    def guess() -> None:
        n = next(numbers)
        service.admin_access.login(username_of(n), f"guess {n}", client_hash=CLIENT)

    errors = run_together(guess, attempts)
    assert len(hasher.checked) == limit
    assert sorted(type(error).__name__ for error in errors) == (
        ["LoginThrottled"] * (attempts - limit) + ["Unauthorized"] * limit
    )


@pytest.mark.argon2_default_cost
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
    assert listed.exit_code == 0 and listed.output.startswith("ada\towner\tcreated ")
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


def test_cli_creates_an_editor_and_changes_roles(run: Any, newsletter_service: Any) -> None:
    assert run("admin", "create-user", "ada", stdin=PASSWORD + "\n").exit_code == 0
    created = run("admin", "create-user", "eve", "--role", "editor", stdin=PASSWORD + "\n")
    assert created.exit_code == 0 and "admin user 'eve' created (editor)" in created.output
    assert run("admin", "list-users").output.splitlines()[1].startswith("eve\teditor\tcreated ")
    unknown = run("admin", "create-user", "bob", "--role", "admin", stdin=PASSWORD + "\n")
    assert unknown.exit_code == 2 and "'admin' is not one of 'owner', 'editor'" in unknown.output
    promoted = run("admin", "set-role", "eve", "owner")
    assert promoted.exit_code == 0 and "admin user 'eve' is now an owner" in promoted.output
    assert run("admin", "set-role", "ada", "editor").exit_code == 0
    last = run("admin", "set-role", "eve", "editor")
    assert last.exit_code == 1 and "'eve' is the last owner" in last.output
    missing = run("admin", "set-role", "bob", "owner")
    assert missing.exit_code == 1 and "no admin user 'bob'" in missing.output
    roles = {user.username: user.role for user in newsletter_service.admin_access.list_users()}
    assert roles == {"ada": "editor", "eve": "owner"}
    acts = [(entry.action, entry.target) for entry in newsletter_service.admin_audit.latest(10)]
    assert ("admin_user.role", "eve is now an owner") in acts
    assert ("admin_user.role", "ada is now an editor") in acts


def test_the_last_owner_stays_one_while_other_users_remain(newsletter_service: Any) -> None:
    access = newsletter_service.admin_access
    access.create_user("ada", PASSWORD)
    access.create_user("eve", PASSWORD, role="editor")
    with pytest.raises(InvalidRequest, match="'ada' is the last owner"):
        access.delete_user("ada")
    with pytest.raises(InvalidRequest, match="'ada' is the last owner"):
        access.set_role("ada", "editor")
    with pytest.raises(InvalidRequest, match="role must be one of owner, editor"):
        access.set_role("eve", "root")
    with pytest.raises(InvalidRequest, match="role must be one of owner, editor"):
        access.create_user("bob", PASSWORD, role="Owner")
    access.set_role("ada", "owner")  # already one: no change, no refusal
    access.delete_user("eve")
    access.delete_user("ada")  # the only user: the admin area turns off
    assert access.list_users() == []


def test_a_session_carries_its_users_role_as_it_is_now(newsletter_service: Any) -> None:
    access = newsletter_service.admin_access
    access.create_user("ada", PASSWORD)
    access.create_user("eve", PASSWORD, role="editor")
    token = access.login("eve", PASSWORD, client_hash=CLIENT).token
    assert access.session(token).role == "editor"
    access.set_role("eve", "owner")
    assert access.session(token).role == "owner"


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


def test_a_session_s_last_use_is_written_at_most_once_a_minute(
    service: Any, now: list[datetime]
) -> None:
    access = service.admin_access
    access.create_user("ada", PASSWORD)
    token = access.login("ada", PASSWORD, client_hash=CLIENT).token

    def last_seen() -> datetime:
        with service.storage.transaction(write=False) as uow:
            return uow.admin_sessions.get(sha256_hex(token)).last_seen_at

    now[0] = T0 + timedelta(seconds=59)
    assert access.session(token) is not None
    assert last_seen() == T0  # a read: nothing written
    now[0] = T0 + timedelta(minutes=1)
    assert access.session(token) is not None
    assert last_seen() == T0 + timedelta(minutes=1)
    # The idle timeout counts from the last use written: at most a minute more.
    now[0] = T0 + timedelta(minutes=1, seconds=30) + timedelta(hours=2)
    assert access.session(token) is None
