"""``/admin/settings``: the list-source credentials (set, turn off; shown as on/off with the
user name, never the key) and the outbox's counts with its two actions, through the same
:class:`~newsletter_connector.service.admin.AdminService` methods as ``listsource
set-credentials`` / ``listsource disable`` and ``outbox retry-now`` / ``outbox replay --all``.

The key is read from the form and stored as a digest; it is never put back in a page (not even
when the form is shown again with an error), a redirect, a log line or the audit record.
"""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest
from .act import ActCall
from .base import AdminPages
from .gate import Admin, signed_in
from .paths import (
    LISTSOURCE,
    LISTSOURCE_OFF,
    OUTBOX_FAILED,
    OUTBOX_REPLAY,
    OUTBOX_RETRY,
)

CURRENT = "List source and outbox"
#: The list-source form's refusals in words, by the field the service names (its own
#: sentence, ``user must be non-blank, without ':' or spaces``, names the API's fields).
LISTSOURCE_WORDS = {
    "user": "User name: it is required, and may hold no spaces or colons",
    "key": "Key: it must be at least 12 characters long",
}


class SettingsPage:
    """GET shows the list-source state and form and the outbox counts with their actions
    (the acts their forms post to are rows of :data:`.acts.ACTS`)."""

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
        user: str = "",
    ) -> None:
        """The page; with ``error`` (a 400) the list-source form is shown again with ``user``
        and the reason in words (:data:`LISTSOURCE_WORDS`), the key field left empty."""
        service = self.pages.service.admin
        self.pages.show(
            req,
            resp,
            admin,
            "settings.html",
            status=status,
            current=CURRENT,
            listsource=service.listsource_status(),
            outbox=service.outbox_status(),
            error=LISTSOURCE_WORDS.get(error.field or "", error.message) if error else None,
            error_field=error.field if error else None,
            user=user[:200],
            listsource_url=self.pages.url(LISTSOURCE),
            listsource_off_url=self.pages.url(LISTSOURCE_OFF),
            retry_url=self.pages.url(OUTBOX_RETRY),
            replay_url=self.pages.url(OUTBOX_REPLAY),
            failed_url=self.pages.url(OUTBOX_FAILED),
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self.show(req, resp, signed_in(req))


def set_listsource(call: ActCall) -> str:
    """Set the list-source credentials from the form; the target is the user name."""
    user = call.form.get("user")
    call.service.admin.set_listsource_credentials(user, call.form.get("key"))
    return user


def listsource_form_again(call: ActCall, error: InvalidRequest) -> None:
    """The page again (400) with the refused user name and the message, the key left empty."""
    SettingsPage(call.pages).show(
        call.req,
        call.resp,
        call.admin,
        status=falcon.HTTP_400,
        error=error,
        user=call.form.get("user"),
    )
