"""``/admin/settings/admin-users``: the built-in login's users (name, when created), adding one
(username and the password twice; at least 12 characters) and deleting one after a confirm
step, through the same :class:`~newsletter_connector.service.admin_access.AdminAccessService`
methods as ``admin list-users`` / ``create-user`` / ``delete-user``. Deleting a user ends its
sessions; an admin cannot delete their own user.

The password is read from the form and stored as an argon2id hash only: it is never put back
in a page (not even when the form is shown again with an error), a redirect or the audit
record. With the ``newsletter_admin_user`` host hook the host decides who is an admin: the page
says so and its forms are refused.
"""

from __future__ import annotations

from urllib.parse import urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ..pages.forms import FormData
from .base import AdminPages
from .gate import Admin, signed_in
from .paths import ADMIN_USER_DELETE, ADMIN_USERS

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
    """GET lists the users with the form adding one; POST adds one (audited
    ``admin_user.create`` with the username as target)."""

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
    ) -> None:
        """The page; with ``error`` (a 400) the form is shown again with ``username`` and the
        message, both password fields left empty."""
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
            username=username[:200],
            create_url=self.pages.url(ADMIN_USERS),
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp, signed_in(req))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        if self.pages.gate.host_hook:
            _refuse_host_managed(self.pages, req, resp, admin)
            return

        def perform(form: FormData) -> str:
            password = form.get("password")
            if password != form.get("password_again"):
                raise InvalidRequest(
                    "the two passwords differ; type the same password twice",
                    field="password",
                )
            return self.pages.service.admin_access.create_user(
                form.get("username"), password
            ).username

        def invalid(form: FormData, error: InvalidRequest) -> None:
            self.show(
                req,
                resp,
                admin,
                status=falcon.HTTP_400,
                error=error,
                username=form.get("username"),
            )

        self.pages.act(
            req,
            resp,
            admin,
            action="admin_user.create",
            perform=perform,
            done="Admin user {target!r} created; they can sign in now.",
            redirect_to=ADMIN_USERS,
            on_invalid=invalid,
        )


class DeleteAdminUserPage:
    """GET asks to confirm deleting ``?username=``; POST deletes that user and ends its
    sessions (audited ``admin_user.delete``). Deleting oneself is refused (400), an unknown
    user is a 404; either way nothing changes."""

    def __init__(self, page: AdminUsersPage) -> None:
        self.page = page
        self.pages = page.pages

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        if self.pages.gate.host_hook:
            _refuse_host_managed(self.pages, req, resp, admin)
            return
        username = req.get_param("username") or ""
        known = {user.username for user in self.pages.service.admin_access.list_users()}
        if username not in known:
            raise falcon.HTTPNotFound()
        self.pages.show(
            req,
            resp,
            admin,
            "admin_user_delete.html",
            current=CURRENT,
            username=username,
            yourself=username == admin.name,
            action_url=self.pages.url(ADMIN_USER_DELETE),
            list_url=self.pages.url(ADMIN_USERS),
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)
        if self.pages.gate.host_hook:
            _refuse_host_managed(self.pages, req, resp, admin)
            return

        def perform(form: FormData) -> str:
            username = form.get("username")
            try:
                self.pages.service.admin_access.delete_user(username, acting_user=admin.name)
            except NotFound:
                raise falcon.HTTPNotFound() from None
            return username

        def invalid(_form: FormData, error: InvalidRequest) -> None:
            self.page.show(req, resp, admin, status=falcon.HTTP_400, error=error)

        self.pages.act(
            req,
            resp,
            admin,
            action="admin_user.delete",
            perform=perform,
            done="Admin user {target!r} deleted; their sessions are ended.",
            redirect_to=ADMIN_USERS,
            on_invalid=invalid,
        )


def _refuse_host_managed(
    pages: AdminPages, req: falcon.Request, resp: falcon.Response, admin: Admin
) -> None:
    pages.show(
        req,
        resp,
        admin,
        "message.html",
        status=falcon.HTTP_409,
        current=CURRENT,
        title="Admins are managed by the host site",
        message=HOST_MANAGES,
    )
