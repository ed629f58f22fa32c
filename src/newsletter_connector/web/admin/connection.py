"""``/admin/settings/connection``: the connection to the mailing platform: set it (https base
address, an installed transport, the token), disable it, and test it, through the same
:class:`~newsletter_connector.service.admin.AdminService` methods as ``connection set`` /
``connection disable`` / ``connection test``.

The token is read from the form only: never shown (not even when the form is shown again with
an error), never in a redirect, the flash message, a log line or the audit record. The address
is shown without any credentials it might carry.
"""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest, PluginNotFound
from ...https_rule import without_credentials
from ..pages.forms import FormData
from .base import AdminPages
from .gate import Admin, signed_in
from .paths import CONNECTION, CONNECTION_DISABLE, CONNECTION_TEST

CURRENT = "Platform connection"


class ConnectionPage:
    """GET shows the connection and the form; POST sets the connection."""

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
        form: FormData | None = None,
    ) -> None:
        service = self.pages.service.admin
        record = service.connection()
        transports = service.connection_transports()
        chosen = form.get("transport") if form else (record.transport if record else "events")
        self.pages.show(
            req,
            resp,
            admin,
            "connection.html",
            status=status,
            current=CURRENT,
            record=record,
            shown_base=without_credentials(record.platform_base) if record else None,
            transports=transports,
            chosen=chosen,
            platform_base=_shown_address(form.get("platform_base")) if form else "",
            error=error.message if error else None,
            error_field=error.field if error else None,
            action_url=self.pages.url(CONNECTION),
            disable_url=self.pages.url(CONNECTION_DISABLE),
            test_url=self.pages.url(CONNECTION_TEST),
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp, signed_in(req))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)

        def perform(form: FormData) -> str:
            try:
                record = self.pages.service.admin.set_connection(
                    platform_base=form.get("platform_base"),
                    transport=form.get("transport"),
                    token=form.get("token"),
                )
            except PluginNotFound as error:
                raise InvalidRequest(error.message, field="transport") from None
            return f"{without_credentials(record.platform_base)} via {record.transport}"

        def invalid(form: FormData, error: InvalidRequest) -> None:
            self.show(req, resp, admin, status=falcon.HTTP_400, error=error, form=form)

        self.pages.act(
            req,
            resp,
            admin,
            action="connection.set",
            perform=perform,
            done="Connection set: {target}.",
            redirect_to=CONNECTION,
            on_invalid=invalid,
        )


class DisableConnectionAction:
    """POST disables the connection (nothing is pushed; export endpoints answer 404)."""

    def __init__(self, page: ConnectionPage) -> None:
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        def perform(_form: FormData) -> str:
            was_on = self.pages.service.admin.disable_connection()
            return "disabled" if was_on else "was not configured"

        self.pages.act(
            req,
            resp,
            signed_in(req),
            action="connection.disable",
            perform=perform,
            done="Connection {target}.",
            redirect_to=CONNECTION,
        )


class TestConnectionAction:
    """POST asks the platform whether it accepts the connection; the outcome is flashed."""

    def __init__(self, page: ConnectionPage) -> None:
        self.page = page
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)

        def perform(_form: FormData) -> str:
            return self.pages.service.admin.test_connection().message

        def invalid(_form: FormData, error: InvalidRequest) -> None:
            self.page.show(req, resp, admin, status=falcon.HTTP_400, error=error)

        self.pages.act(
            req,
            resp,
            admin,
            action="connection.test",
            perform=perform,
            done="Connection test: {target}.",
            redirect_to=CONNECTION,
            on_invalid=invalid,
        )


def _shown_address(value: str) -> str:
    """A submitted address as it may be put back in the form: without credentials (an
    address too malformed to parse is not put back)."""
    try:
        return without_credentials(value)[:500]
    except ValueError:
        return ""
