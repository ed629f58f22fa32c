"""The admin area's door, before any admin resource runs (any method, and addresses under
``/admin`` that name no page): while the area is off, the app's unknown-path 404, so nothing
tells that it exists; once it is on, a signed-out visitor gets what :meth:`AdminGate.admin`
answers (the login page, or the host's answer) everywhere except the login page and its
stylesheet, so no other address answers them anything, not even a ``405``.

The door is the one place deciding who may enter, and which pages their role lets them use
(:mod:`.roles`; a page outside it answers a 403 page): the pages behind it take the admin it
found (:func:`~.gate.signed_in`) and never ask again."""

from __future__ import annotations

import re
from typing import Any

import falcon

from .gate import AdminGate, OutsideRole
from .paths import LOGIN, ROOT, STYLESHEET
from .roles import may_use, why_not

#: The admin addresses a signed-out visitor may reach (with the host hook, only the
#: stylesheet: the built-in login is not used, so its page is the host's answer too).
OPEN_TO_VISITORS = frozenset({LOGIN, STYLESHEET})


def open_to_visitors(gate: AdminGate, path: str) -> bool:
    """Whether a signed-out visitor may reach the admin address ``path``."""
    return path in OPEN_TO_VISITORS and not (path == LOGIN and gate.host_hook)


class AdminDoorMiddleware:
    """Falcon middleware: the 404 while the admin area is off, sign-in for every admin
    address but :data:`OPEN_TO_VISITORS` once it is on, and :class:`~.gate.OutsideRole` for an
    address the admin's role may not use."""

    def __init__(self, gate: AdminGate) -> None:
        self._gate = gate

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: Any, params: dict[str, Any]
    ) -> None:
        if not (req.path == ROOT or req.path.startswith(ROOT + "/")):
            return
        self._gate.require_configured(req)
        if not open_to_visitors(self._gate, req.path):
            admin = self._gate.admin(req)
            if not may_use(admin.role, req.path):
                raise OutsideRole(admin, why_not(req.path))


class AdminUnknownPages:
    """Falcon sink for the addresses under ``/admin`` that name no page (the middleware never
    sees them): the 404 for a signed-in admin, and while the area is off; otherwise what the
    gate answers a visitor."""

    def __init__(self, gate: AdminGate) -> None:
        self._gate = gate
        #: The addresses it answers: ``/admin`` and every one below it (``pattern``).
        self.prefix = ROOT
        self.pattern = re.compile(re.escape(ROOT) + r"(?=/|\Z)")

    def __call__(self, req: falcon.Request, resp: falcon.Response, **kwargs: Any) -> None:
        self._gate.admin(req)  # the 404 while off, else the visitor's answer
        raise falcon.HTTPNotFound()
