"""``Cache-Control: no-store`` on every response (errors included) of the surfaces whose bodies
carry secrets: contacts' link tokens, list-source and export answers. Matched on ``req.path``,
which is relative to the mount point, so it holds under any prefix.
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
