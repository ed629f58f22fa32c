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
from .act import ActCall
from .base import AdminPages
from .gate import Admin
from .paths import CONNECTION, CONNECTION_DISABLE, CONNECTION_TEST

CURRENT = "Platform connection"


class ConnectionPage:
    """The connection and the form setting it (served at its address by the
    ``connection.set`` row of :data:`.acts.ACTS`)."""

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


def show_connection(call: ActCall) -> None:
    """GET: the connection and the form setting it."""
    ConnectionPage(call.pages).show(call.req, call.resp, call.admin)


def set_connection(call: ActCall) -> str:
    """Set the connection from the form; the target names the address (without credentials)
    and the transport, never the token.

    :raises InvalidRequest: as ``connection set``; a transport not installed names ``transport``.
    """
    form = call.form
    try:
        record = call.service.admin.set_connection(
            platform_base=form.get("platform_base"),
            transport=form.get("transport"),
            token=form.get("token"),
        )
    except PluginNotFound as error:
        raise InvalidRequest(error.message, field="transport") from None
    return f"{without_credentials(record.platform_base)} via {record.transport}"


def connection_form_again(call: ActCall, error: InvalidRequest) -> None:
    """The page again (400) with the refused form (its token left empty) and the message."""
    ConnectionPage(call.pages).show(
        call.req, call.resp, call.admin, status=falcon.HTTP_400, error=error, form=call.form
    )


def connection_untestable(call: ActCall, error: InvalidRequest) -> None:
    """The page again (400) saying why the connection could not be tested."""
    ConnectionPage(call.pages).show(
        call.req, call.resp, call.admin, status=falcon.HTTP_400, error=error
    )


def _shown_address(value: str) -> str:
    """A submitted address as it may be put back in the form: without credentials (an
    address too malformed to parse is not put back)."""
    try:
        return without_credentials(value)[:500]
    except ValueError:
        return ""
