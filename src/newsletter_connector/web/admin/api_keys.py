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
from .base import AdminPages
from .gate import Admin
from .paths import API_KEYS


class ApiKeysPage:
    """GET lists the keys with the create form; POST creates one and shows it once."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def _list(
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
            current="API keys",
            keys=self.pages.service.admin.list_api_keys(),
            error=error,
            label=label,
            max_label_length=MAX_LABEL_LENGTH,
            action_url=self.pages.url(API_KEYS),
        )

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._list(req, resp, self.pages.gate.admin(req))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        admin = self.pages.gate.admin(req)
        form = self.pages.read_checked_form(req, resp, admin)
        if form is None:
            return
        label = form.get("label")
        try:
            issued = self.pages.service.admin.create_api_key(label)
        except InvalidRequest as error:
            self._list(
                req, resp, admin, status=falcon.HTTP_400, error=error.message, label=label[:200]
            )
            return
        self.pages.audit(req, admin, "api_key.create", issued.record.label)
        self.pages.show(
            req,
            resp,
            admin,
            "api_key_created.html",
            current="API keys",
            record=issued.record,
            key=issued.key,
            list_url=self.pages.url(API_KEYS),
        )


class RevokePage:
    """GET asks to confirm; POST revokes the key and returns to the list."""

    def __init__(self, pages: AdminPages) -> None:
        self.pages = pages

    def _key(self, key_id: str) -> ApiKeyRecord:
        for record in self.pages.service.admin.list_api_keys():
            if str(record.id) == key_id:
                return record
        raise falcon.HTTPNotFound()

    def on_get(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        admin = self.pages.gate.admin(req)
        self.pages.show(
            req,
            resp,
            admin,
            "api_key_revoke.html",
            current="API keys",
            record=self._key(key_id),
            action_url=self.pages.url(f"{API_KEYS}/{key_id}/revoke"),
            list_url=self.pages.url(API_KEYS),
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        admin = self.pages.gate.admin(req)
        self._key(key_id)

        def revoke(_form: object) -> str:
            return self.pages.service.admin.revoke_api_key(key_id).label

        def invalid(_form: object, error: InvalidRequest) -> None:
            raise falcon.HTTPNotFound()

        self.pages.act(
            req,
            resp,
            admin,
            action="api_key.revoke",
            perform=revoke,
            done="Key {target!r} revoked: it no longer works.",
            redirect_to=API_KEYS,
            on_invalid=invalid,
        )
