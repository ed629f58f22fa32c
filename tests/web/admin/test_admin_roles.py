"""Roles: an owner uses every admin page; an editor every page but the settings, the audit
log and importing a list, which answer it a plain 403 page whatever the method, with a valid
form token or not, and change nothing. The menu shows a role only what it may use. A role is
read on every request, so a changed role applies from the next page; a host's hook tells its
admin's role."""

from __future__ import annotations

from typing import Any

import flask
import pytest

from newsletter_connector.descriptors import EDITOR, OWNER, AdminUser
from newsletter_connector.service import NewsletterService
from newsletter_connector.web.admin import paths
from newsletter_connector.web.admin.roles import OWNERS_ONLY, may_use
from tests.support.admin import (
    COOKIE_NAME,
    PASSWORD,
    audit_acts,
    flash_of,
    followed,
    get_page,
    sign_in,
    submit,
)
from tests.web.admin.test_admin_door import ADDRESSES, METHODS, OPEN_TO_VISITORS
from tests.web.admin.test_admin_host_hook import host_site

OUTSIDE = "Not open to editors"
OWNERS_PAGES = [
    a
    for a in ADDRESSES
    if a.startswith(
        (
            "/admin/settings",
            "/admin/audit",
            "/admin/imports",
            "/admin/subscribers/bulk/erase",
            "/admin/subscribers/all/erase",
        )
    )
]
EDITORS_PAGES = [a for a in ADDRESSES if a not in OWNERS_PAGES and a not in OPEN_TO_VISITORS]
#: Every method a signed-in browser sends with its cookie (falcon's test client, as browsers
#: on a preflight, sends none with ``OPTIONS``, which the door answers as a visitor's).
SIGNED_IN_METHODS = [method for method in METHODS if method != "OPTIONS"]
#: Menu labels an editor does not see.
OWNERS_MENU = (
    "API keys",
    "List source and outbox",
    "Platform connection",
    "Admin users",
    "Audit log",
)


@pytest.fixture
def editor(service: Any, admin_user: str) -> str:
    """An editor (beside the owner ``admin_user``), signed in: its session cookie."""
    service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
    return "eve"


def test_the_owners_pages_are_the_settings_the_audit_log_imports_and_bulk_erasing() -> None:
    assert set(OWNERS_ONLY) == {
        paths.SETTINGS,
        paths.AUDIT,
        paths.IMPORTS,
        paths.SUBSCRIBERS_BULK_ERASE,
        paths.SUBSCRIBERS_ALL_ERASE,
    }
    assert not may_use(EDITOR, paths.SUBSCRIBERS_ALL_ERASE)
    assert may_use(EDITOR, paths.SUBSCRIBERS_BULK_UNSUBSCRIBE)
    assert {paths.API_KEYS, paths.CONNECTION, paths.ADMIN_USERS, paths.OUTBOX_FAILED} <= set(
        OWNERS_PAGES
    )
    assert {paths.SUBSCRIBERS, paths.MESSAGES, paths.ISSUES, paths.ANALYTICS} <= set(EDITORS_PAGES)
    assert not may_use(EDITOR, "/admin/settings") and not may_use(EDITOR, "/admin/audit/x")
    assert may_use(EDITOR, "/admin/settingsx") and may_use(OWNER, "/admin/audit")


@pytest.mark.parametrize("address", OWNERS_PAGES)
def test_an_editor_gets_a_403_page_on_an_owners_address_whatever_the_method(
    client: Any, service: Any, editor: str, address: str
) -> None:
    session = sign_in(client, editor)
    keys_before = service.admin.list_api_keys()
    for method in SIGNED_IN_METHODS:
        result = client.simulate_request(method, address, cookies={COOKIE_NAME: session})
        assert result.status_code == 403, (method, result.status_code)
        if method != "HEAD":
            assert OUTSIDE in result.text and "Back to the dashboard" in result.text
    assert service.admin.list_api_keys() == keys_before
    assert [act for act, _ in audit_acts(service)] == ["login"]


@pytest.mark.parametrize("address", EDITORS_PAGES)
def test_an_editor_gets_what_an_owner_gets_everywhere_else(
    client: Any, editor: str, admin_user: str, address: str
) -> None:
    owner, editor_session = sign_in(client, admin_user), sign_in(client, editor)
    for method in ("GET", "POST"):
        as_owner = client.simulate_request(method, address, cookies={COOKIE_NAME: owner})
        as_editor = client.simulate_request(method, address, cookies={COOKIE_NAME: editor_session})
        assert as_editor.status_code == as_owner.status_code, (method, as_editor.text[:300])
        assert OUTSIDE not in as_editor.text


def test_a_valid_form_token_does_not_open_an_owners_act_to_an_editor(
    client: Any, service: Any, editor: str
) -> None:
    session = sign_in(client, editor)
    result = submit(client, paths.API_KEYS, session, {"label": "sneaky"}, form=paths.HOME)
    assert result.status_code == 403 and OUTSIDE in result.text
    assert service.admin.list_api_keys() == []
    deleted = submit(client, paths.ADMIN_USER_DELETE, session, {"username": "ada"}, form=paths.HOME)
    assert deleted.status_code == 403
    assert [user.username for user in service.admin_access.list_users()] == ["ada", "eve"]


def test_the_menu_and_the_dashboard_show_a_role_only_its_pages(
    client: Any, editor: str, admin_user: str
) -> None:
    as_editor = get_page(client, paths.HOME, sign_in(client, editor)).text
    as_owner = get_page(client, paths.HOME, sign_in(client, admin_user)).text
    for label in OWNERS_MENU:
        assert f">{label}</a>" in as_owner
        assert f">{label}</a>" not in as_editor
    for label in ("Subscribers", "Contact messages", "Issues", "Analytics"):
        assert f">{label}</a>" in as_editor


def test_a_changed_role_applies_from_the_next_request(
    client: Any, service: Any, editor: str, admin_user: str
) -> None:
    session = sign_in(client, editor)
    assert get_page(client, paths.API_KEYS, session).status_code == 403
    service.admin_access.set_role(editor, OWNER)
    assert get_page(client, paths.API_KEYS, session).status_code == 200
    service.admin_access.set_role(editor, EDITOR)
    assert get_page(client, paths.API_KEYS, session).status_code == 403


def test_an_owner_adds_an_editor_and_changes_roles_on_the_admin_users_page(
    client: Any, service: Any, session: str
) -> None:
    page = get_page(client, paths.ADMIN_USERS, session)
    assert '<option value="editor" selected>' in page.text  # the least a new admin needs
    fields = {"username": "sam", "password": PASSWORD, "password_again": PASSWORD}
    created = submit(client, paths.ADMIN_USERS, session, {**fields, "role": EDITOR})
    assert flash_of(followed(client, created, session)) == (
        "Admin user 'sam' created; they can sign in now."
    )
    roles = {user.username: user.role for user in service.admin_access.list_users()}
    assert roles == {"ada": OWNER, "sam": EDITOR}
    page = get_page(client, paths.ADMIN_USERS, session).text
    assert '<td data-label="Role">Editor</td>' in page and "Make owner</button>" in page

    made = submit(
        client,
        paths.ADMIN_USER_ROLE,
        session,
        {"username": "sam", "role": OWNER},
        form=paths.ADMIN_USERS,
    )
    assert flash_of(followed(client, made, session)) == (
        "Role changed: sam is now an owner. It applies from their next page."
    )
    assert ("admin_user.role", "sam is now an owner") in audit_acts(service)
    assert {user.username: user.role for user in service.admin_access.list_users()}["sam"] == OWNER


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"username": "ada", "role": EDITOR}, "you cannot change your own role"),
        ({"username": "sam", "role": "admin"}, "role must be one of owner, editor"),
    ],
    ids=["own-role", "unknown-role"],
)
def test_a_refused_role_change_names_why_and_changes_nothing(
    client: Any, service: Any, session: str, fields: dict[str, str], message: str
) -> None:
    service.admin_access.create_user("sam", PASSWORD, role=EDITOR)
    result = submit(client, paths.ADMIN_USER_ROLE, session, fields, form=paths.ADMIN_USERS)
    assert result.status_code == 400
    assert f'id="list-error">{message}</p>' in result.text
    roles = {user.username: user.role for user in service.admin_access.list_users()}
    assert roles == {"ada": OWNER, "sam": EDITOR}


def test_an_unknown_role_for_a_new_user_is_refused_at_the_form(
    client: Any, service: Any, session: str
) -> None:
    fields = {"username": "sam", "password": PASSWORD, "password_again": PASSWORD}
    result = submit(client, paths.ADMIN_USERS, session, {**fields, "role": "root"})
    assert result.status_code == 400
    assert 'id="user-error">role must be one of owner, editor</p>' in result.text
    assert [user.username for user in service.admin_access.list_users()] == ["ada"]


@pytest.fixture
def host(newsletter_settings: Any, newsletter_storage: Any) -> flask.Flask:
    return host_site(
        lambda plugin: NewsletterService.build(
            newsletter_settings, storage=newsletter_storage, plugins=[plugin]
        ),
        role=EDITOR,
    )


def test_a_host_hook_tells_its_admins_role(host: flask.Flask) -> None:
    client = host.test_client()
    client.post("/login", data={"name": "Grace"})
    assert client.get("/newsletter/admin/subscribers").status_code == 200
    refused = client.get("/newsletter/admin/settings/api-keys")
    assert refused.status_code == 403
    assert OUTSIDE in refused.get_data(as_text=True)


def test_a_host_admin_is_an_owner_unless_said_and_no_other_role_is_taken() -> None:
    assert AdminUser(name="Grace").role == OWNER
    with pytest.raises(ValueError, match="role must be one of owner, editor"):
        AdminUser(name="Grace", role="admin")
