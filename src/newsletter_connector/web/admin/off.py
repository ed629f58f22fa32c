"""While the admin area is off, every request routed to it (any method, so no ``405`` either)
is the app's unknown-path 404, before its resource runs."""

from __future__ import annotations

from typing import Any

import falcon

from .gate import AdminGate
from .paths import ROOT


class AdminOffMiddleware:
    """Falcon middleware answering admin routes with the unknown-path 404 while unconfigured."""

    def __init__(self, gate: AdminGate) -> None:
        self._gate = gate

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        if resource is None or not (req.path == ROOT or req.path.startswith(ROOT + "/")):
            return
        self._gate.require_configured(req)
