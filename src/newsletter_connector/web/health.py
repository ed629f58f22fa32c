"""``/healthz`` (the process answers) and ``/readyz`` (the database answers and its schema is
current), relative to the mount point: unauthenticated, never rate limited, outside the admin
area, with one-word bodies that reveal nothing else.

``/readyz`` keeps its answer for :data:`READY_CACHE_SECONDS` per process, so load balancers
probing every second from many places cost the database at most one check a second per
process; an outage or a recovery shows within that second.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import falcon

from ..errors import NewsletterError
from ..service import NewsletterService

log = logging.getLogger(__name__)

HEALTHZ = "/healthz"
READYZ = "/readyz"
#: Seconds one readiness check answers for (see the module's docstring).
READY_CACHE_SECONDS = 1.0


def _answer(resp: falcon.Response, status: str, body: str) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_TEXT
    resp.cache_control = ["no-store"]
    resp.text = body


class HealthzResource:
    """200 ``ok``: the process serves requests. Touches nothing else."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _answer(resp, falcon.HTTP_200, "ok\n")

    on_head = on_get


class ReadyzResource:
    """200 ``ready`` when the storage's ``check_ready`` passes, else 503 ``not ready``
    (``req.context.unavailable_cause`` names the error code for the metrics)."""

    def __init__(
        self,
        service: NewsletterService,
        *,
        ttl: float = READY_CACHE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self.ttl = ttl
        self.monotonic = monotonic
        self._lock = threading.Lock()
        self._checked_at = float("-inf")
        self._cause: str | None = None  # None: ready

    def cause(self) -> str | None:
        """``None`` when ready, else the error code of why not (at most :attr:`ttl` old)."""
        with self._lock:
            if self.monotonic() - self._checked_at < self.ttl:
                return self._cause
            cause = self._check()
            if cause != self._cause:
                if cause is None:
                    log.warning("ready again: the database answers and its schema is current")
                else:
                    log.warning("not ready: %s", cause)
            self._cause, self._checked_at = cause, self.monotonic()
            return cause

    def _check(self) -> str | None:
        try:
            self.service.storage.check_ready()
        except NewsletterError as exc:
            return exc.code
        except Exception:
            log.exception("readiness check failed")
            return "error"
        return None

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        cause = self.cause()
        if cause is None:
            _answer(resp, falcon.HTTP_200, "ready\n")
            return
        req.context.unavailable_cause = cause
        _answer(resp, falcon.HTTP_503, "not ready\n")

    on_head = on_get


def add_routes(
    app: falcon.App[falcon.Request, falcon.Response], service: NewsletterService
) -> None:
    """Add ``/healthz`` and ``/readyz`` to ``app``."""
    app.add_route(HEALTHZ, HealthzResource())
    app.add_route(READYZ, ReadyzResource(service, ttl=READY_CACHE_SECONDS))
