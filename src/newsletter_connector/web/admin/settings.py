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
from ..pages.forms import FormData
from .base import AdminPages
from .gate import Admin, signed_in
from .paths import (
    LISTSOURCE,
    LISTSOURCE_OFF,
    OUTBOX_FAILED,
    OUTBOX_REPLAY,
    OUTBOX_RETRY,
    SETTINGS,
)

CURRENT = "List source and outbox"


class SettingsPage:
    """GET shows the list-source state and form and the outbox counts with their actions."""

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
        and the message, the key field left empty."""
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
            error=error.message if error else None,
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


class ListSourceAction:
    """POST sets the list-source credentials (user and key) and turns the surface on."""

    def __init__(self, page: SettingsPage) -> None:
        self.page = page
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = signed_in(req)

        def perform(form: FormData) -> str:
            user = form.get("user")
            self.pages.service.admin.set_listsource_credentials(user, form.get("key"))
            return user

        def invalid(form: FormData, error: InvalidRequest) -> None:
            self.page.show(
                req, resp, admin, status=falcon.HTTP_400, error=error, user=form.get("user")
            )

        self.pages.act(
            req,
            resp,
            admin,
            action="listsource.set",
            perform=perform,
            done="List-source surface on for user {target!r}.",
            redirect_to=SETTINGS,
            on_invalid=invalid,
        )


class ListSourceOffAction:
    """POST turns the list-source surface off."""

    def __init__(self, page: SettingsPage) -> None:
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        def perform(_form: FormData) -> str:
            was_on = self.pages.service.admin.disable_listsource()
            return "turned off" if was_on else "already off"

        self.pages.act(
            req,
            resp,
            signed_in(req),
            action="listsource.disable",
            perform=perform,
            done="List-source surface {target}.",
            redirect_to=SETTINGS,
        )


class OutboxRetryAction:
    """POST makes every batch waiting for its next attempt due now (``outbox retry-now``)."""

    def __init__(self, page: SettingsPage) -> None:
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        def perform(_form: FormData) -> str:
            return f"{self.pages.service.admin.retry_outbox_now()} batch(es)"

        self.pages.act(
            req,
            resp,
            signed_in(req),
            action="outbox.retry_now",
            perform=perform,
            done="{target} waiting for a retry are due now; they go out on the next sync.",
            redirect_to=SETTINGS,
        )


class OutboxReplayAction:
    """POST puts every failed batch back in the queue (``outbox replay --all``)."""

    def __init__(self, page: SettingsPage) -> None:
        self.pages = page.pages

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        def perform(_form: FormData) -> str:
            return f"{self.pages.service.admin.replay_failed_batches()} failed batch(es)"

        self.pages.act(
            req,
            resp,
            signed_in(req),
            action="outbox.replay",
            perform=perform,
            done="{target} replayed with a fresh retry ladder; they go out on the next sync.",
            redirect_to=SETTINGS,
        )
