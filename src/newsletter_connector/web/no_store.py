"""``Cache-Control: no-store`` on every response of the surfaces whose bodies carry secrets.

Newsletter API contacts carry the unsubscribe, profile and confirm URLs, each holding a token
(SPEC 2.1: "handled with the same care as the API key"); list-source and export answers go to
a credentialed platform. Every response under those prefixes (success, 4xx and 5xx alike, and
whatever produced it: a responder, a sink or an error handler) is marked so no browser or proxy
keeps a copy. The prefix is matched on ``req.path``, which falcon gives relative to the mount
point (``SCRIPT_NAME``), so the rule holds under any mount prefix.
"""

from __future__ import annotations

from typing import Any

import falcon

from .paths import surface_of

#: The surfaces (``paths.surface_of``) whose every response is ``no-store``.
NO_STORE_SURFACES = frozenset({"newsletter", "listsource", "export"})


class NoStoreMiddleware:
    """Falcon middleware setting ``Cache-Control: no-store`` on :data:`NO_STORE_SURFACES`."""

    def process_response(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, req_succeeded: bool
    ) -> None:
        if surface_of(req.path) in NO_STORE_SURFACES:
            resp.cache_control = ["no-store"]
