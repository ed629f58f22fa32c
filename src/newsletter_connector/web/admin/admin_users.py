"""``/admin/settings/admin-users``: the built-in login's users (name, role, when created),
adding one (username, role and the password twice; at least 12 characters), making one an owner
or an editor, and deleting one after a confirm step, through the same
:class:`~newsletter_connector.service.admin_access.AdminAccessService` methods as ``admin
list-users`` / ``create-user`` / ``set-role`` / ``delete-user``. Deleting a user ends its
sessions; an admin cannot delete their own user or change their own role, and the last owner
stays an owner while other users remain.

The password is read from the form and stored as an argon2id hash only: it is never put back
in a page (not even when the form is shown again with an error), a redirect or the audit
record. With the ``newsletter_admin_user`` host hook the host decides who is an admin: the page
says so and its forms are refused.
"""

from __future__ import annotations

from urllib.parse import urlencode

import falcon

from ...descriptors import ADMIN_ROLES, EDITOR
from ...errors import InvalidRequest, NotFound
from .act import ActCall, Unavailable
from .base import AdminPages
from .gate import Admin
from .paths import ADMIN_USER_DELETE, ADMIN_USER_ROLE, ADMIN_USERS

CURRENT = "Admin users"
#: Answered to a form of this page while the host manages admins: nothing was changed.
HOST_MANAGES = (
    "The host site decides who is an admin here, so admin users are managed there; nothing "
    "was changed."
)


def delete_path(username: str) -> str:
    """The app path of the confirm step of deleting ``username``."""
    return f"{ADMIN_USER_DELETE}?{urlencode({'username': username})}"


class AdminUsersPage:
    """The users with the form adding one (served at its address by the
    ``admin_user.create`` row of :data:`.acts.ACTS`)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        *,
        status: str = falcon.HTTP_200,
        error: InvalidRequest | None = None,
        username: str = "",
        role: str = EDITOR,
        list_error: bool = False,
    ) -> None:
        """The page; with ``error`` (a 400) the form is shown again with ``username``, ``role``
        and the message, both password fields left empty (with ``list_error``, the message is
        about the list, above it)."""
        host = self.pages.gate.host_hook
        users = [] if host else self.pages.service.admin_access.list_users()
        self.pages.show(
            req,
            resp,
            admin,
            "admin_users.html",
            status=status,
            current=CURRENT,
            host_managed=host,
            users=[(user, self.pages.url(delete_path(user.username))) for user in users],
            error=error.message if error else None,
            error_field=error.field if error else None,
            list_error=list_error,
            username=username[:200],
            role=role if role in ADMIN_ROLES else EDITOR,
            create_url=self.pages.url(ADMIN_USERS),
            role_url=self.pages.url(ADMIN_USER_ROLE),
        )


def show_users(call: ActCall) -> None:
    """GET: the users and the form adding one (with the host hook: that the host manages
    admins, and no form)."""
    AdminUsersPage(call.pages).show(call.req, call.resp, call.admin)


def built_in_users_only(call: ActCall) -> None:
    """:raises Unavailable: 409 while the host manages admins (before the form is read)."""
    if call.pages.gate.host_hook:
        raise Unavailable(
            falcon.HTTP_409,
            current=CURRENT,
            title="Admins are managed by the host site",
            message=HOST_MANAGES,
        )


def create_user(call: ActCall) -> str:
    """Add the form's user; the target is the username.

    :raises InvalidRequest: the two passwords differ, or as ``admin create-user``.
    """
    password = call.form.get("password")
    if password != call.form.get("password_again"):
        raise InvalidRequest(
            "the two passwords differ; type the same password twice", field="password"
        )
    # The form's select always sends a role; a post without one gets the form's default.
    username, role = call.form.get("username"), call.form.get("role") or EDITOR
    return call.service.admin_access.create_user(username, password, role=role).username


def create_refused(call: ActCall, error: InvalidRequest) -> None:
    """The page again (400) with the refused username and the message, no password."""
    AdminUsersPage(call.pages).show(
        call.req,
        call.resp,
        call.admin,
        status=falcon.HTTP_400,
        error=error,
        username=call.form.get("username"),
        role=call.form.get("role"),
    )


def confirm_delete(call: ActCall) -> None:
    """GET ``?username=``: asks to confirm deleting the user (a 404 for no such user, a 409
    while the host manages admins)."""
    built_in_users_only(call)
    username = call.req.get_param("username") or ""
    known = {user.username for user in call.service.admin_access.list_users()}
    if username not in known:
        raise falcon.HTTPNotFound()
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "admin_user_delete.html",
        current=CURRENT,
        username=username,
        yourself=username == call.admin.name,
        action_url=call.pages.url(ADMIN_USER_DELETE),
        list_url=call.pages.url(ADMIN_USERS),
    )


def delete_user(call: ActCall) -> str:
    """Delete the form's user and end its sessions; the target is the username. No such user
    is a 404.

    :raises InvalidRequest: the admin deleting their own user.
    """
    username = call.form.get("username")
    try:
        call.service.admin_access.delete_user(username, acting_user=call.admin.name)
    except NotFound:
        raise falcon.HTTPNotFound() from None
    return username


def set_role(call: ActCall) -> str:
    """Give the form's user the form's role; the target says who has which role now. No such
    user is a 404.

    :raises InvalidRequest: an unknown role, the admin's own role, or the last owner made an
        editor.
    """
    username, role = call.form.get("username"), call.form.get("role")
    try:
        call.service.admin_access.set_role(username, role, acting_user=call.admin.name)
    except NotFound:
        raise falcon.HTTPNotFound() from None
    return f"{username} is now an {role}"


def list_refused(call: ActCall, error: InvalidRequest) -> None:
    """The list again (400) saying why nothing was changed."""
    AdminUsersPage(call.pages).show(
        call.req, call.resp, call.admin, status=falcon.HTTP_400, error=error, list_error=True
    )
