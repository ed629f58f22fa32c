"""The address a request came from, for per-client limits.

``REMOTE_ADDR`` is the peer of the connection: with the app served directly that is the
client. Behind reverse proxies it is the nearest proxy, and each proxy appends the address it
received the request from to ``X-Forwarded-For``. Only the entries the trusted proxies appended
can be believed (a client may send any ``X-Forwarded-For`` it likes, and the proxies append to
it), so with ``trusted_proxies = N`` the client is the N-th entry from the right: the address
the outermost trusted proxy saw. With 0 the header is ignored.
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
