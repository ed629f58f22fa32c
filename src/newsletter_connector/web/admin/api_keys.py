"""``/admin/settings/api-keys``: list, create and revoke the Newsletter API keys, through the
same :class:`~newsletter_connector.service.admin.AdminService` methods as ``keys ...``.

A new key is shown once, on the response to the form that created it (``no-store``); it is
never on the list, in a redirect, a log line or the audit record (which names the label).
"""

from __future__ import annotations

import falcon

from ...errors import InvalidRequest
from ...service.admin import MAX_LABEL_LENGTH
from ...storage.access_records import ApiKeyRecord
from .act import ActCall, Done
from .base import AdminPages
from .gate import Admin
from .paths import API_KEYS

CURRENT = "API keys"


class ApiKeysPage:
    """The keys with the form creating one (served at its address by the ``api_key.create``
    row of :data:`.acts.ACTS`)."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        admin: Admin,
        *,
        status: str = falcon.HTTP_200,
        error: str | None = None,
        label: str = "",
    ) -> None:
        self.pages.show(
            req,
            resp,
            admin,
            "api_keys.html",
            status=status,
            current=CURRENT,
            keys=self.pages.service.admin.list_api_keys(),
            error=error,
            label=label,
            max_label_length=MAX_LABEL_LENGTH,
            action_url=self.pages.url(API_KEYS),
        )


def show_keys(call: ActCall) -> None:
    """GET: the keys and the form creating one."""
    ApiKeysPage(call.pages).show(call.req, call.resp, call.admin)


def create_key(call: ActCall) -> Done:
    """Create a key labelled from the form and show it, once, on this response (no redirect:
    the key is stored nowhere to show later); the target is the label."""
    issued = call.service.admin.create_api_key(call.form.get("label"))

    def answer() -> None:
        call.pages.show(
            call.req,
            call.resp,
            call.admin,
            "api_key_created.html",
            current=CURRENT,
            record=issued.record,
            key=issued.key,
            list_url=call.pages.url(API_KEYS),
        )

    return Done(issued.record.label, answer=answer)


def create_refused(call: ActCall, error: InvalidRequest) -> None:
    """The list again (400) with the refused label and the message."""
    ApiKeysPage(call.pages).show(
        call.req,
        call.resp,
        call.admin,
        status=falcon.HTTP_400,
        error=error.message,
        label=call.form.get("label")[:200],
    )


def revoke_path(key_id: str) -> str:
    """The app path of the confirm step of revoking the key ``key_id``."""
    return f"{API_KEYS}/{key_id}/revoke"


def key_of(call: ActCall) -> ApiKeyRecord:
    """The key the route's ``key_id`` names; a 404 when none has that id."""
    key_id = call.params["key_id"]
    for record in call.service.admin.list_api_keys():
        if str(record.id) == key_id:
            return record
    raise falcon.HTTPNotFound()


def confirm_revoke(call: ActCall) -> None:
    """GET: asks to confirm revoking the key (a 404 for no such key)."""
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "api_key_revoke.html",
        current=CURRENT,
        record=key_of(call),
        action_url=call.pages.url(revoke_path(call.params["key_id"])),
        list_url=call.pages.url(API_KEYS),
    )


def revoke_key(call: ActCall) -> str:
    """Revoke the key; the target is its label. A key gone meanwhile is a 404."""
    try:
        return call.service.admin.revoke_api_key(call.params["key_id"]).label
    except InvalidRequest:
        raise falcon.HTTPNotFound() from None
