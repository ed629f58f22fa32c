"""The address a request came from, for per-client limits: ``REMOTE_ADDR``, or behind
``trusted_proxies`` proxies the ``X-Forwarded-For`` entry the outermost of them appended
(docs/contributing/decisions/reader-pages.md, "`X-Forwarded-For` only behind trusted proxies").

A request carrying ``X-Forwarded-For`` while ``trusted_proxies`` is 0 most likely came through
a proxy the settings do not know of: every client then shares the proxy's address, so one
client can exhaust the sign-in throttle and the form limits for all. The first such request in
a process logs one warning saying so (never the addresses).
"""

from __future__ import annotations

import logging
import threading

import falcon

log = logging.getLogger("newsletter_connector.web")

UNTRUSTED_FORWARDING_WARNING = (
    "requests carry X-Forwarded-For but trusted_proxies is 0: sign-in throttling and the "
    "per-client form limits see the proxy's address, so every client shares one count and "
    "anyone could lock the admins out. Set trusted_proxies (NEWSLETTER_TRUSTED_PROXIES) to "
    "the number of proxies that append to X-Forwarded-For (docs/security.md); this warning "
    "is logged once per process"
)

_warned = threading.Event()


def client_address(req: falcon.Request, trusted_proxies: int) -> str:
    """The client address of ``req`` when ``trusted_proxies`` proxies append to
    ``X-Forwarded-For``; ``REMOTE_ADDR`` when there are none, or when the header holds fewer
    entries than that (then the request did not come through all of them)."""
    remote = str(req.env.get("REMOTE_ADDR") or "")
    header = req.get_header("X-Forwarded-For")
    if trusted_proxies <= 0:
        if header:
            warn_untrusted_forwarding()
        return remote
    if not header:
        return remote
    hops = [hop.strip() for hop in header.split(",")]
    if len(hops) < trusted_proxies:
        return remote
    return hops[-trusted_proxies] or remote


def warn_untrusted_forwarding() -> None:
    """Log :data:`UNTRUSTED_FORWARDING_WARNING` the first time in this process."""
    if not _warned.is_set():
        _warned.set()
        log.warning(UNTRUSTED_FORWARDING_WARNING)


def forget_warning() -> None:
    """Forget that the warning was logged (for tests: as a fresh process would)."""
    _warned.clear()
