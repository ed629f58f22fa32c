"""The address a request came from, for per-client limits: ``REMOTE_ADDR``, or behind
``trusted_proxies`` proxies the ``X-Forwarded-For`` entry the outermost of them appended
(docs/decisions.md, "`X-Forwarded-For` only behind trusted proxies").
"""

from __future__ import annotations

import falcon


def client_address(req: falcon.Request, trusted_proxies: int) -> str:
    """The client address of ``req`` when ``trusted_proxies`` proxies append to
    ``X-Forwarded-For``; ``REMOTE_ADDR`` when there are none, or when the header holds fewer
    entries than that (then the request did not come through all of them)."""
    remote = str(req.env.get("REMOTE_ADDR") or "")
    if trusted_proxies <= 0:
        return remote
    header = req.get_header("X-Forwarded-For")
    if not header:
        return remote
    hops = [hop.strip() for hop in header.split(",")]
    if len(hops) < trusted_proxies:
        return remote
    return hops[-trusted_proxies] or remote
