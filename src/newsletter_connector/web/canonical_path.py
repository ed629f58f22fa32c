"""Only canonical paths are routed: a path with an empty segment (``//`` anywhere, leading
included) or a ``.`` or ``..`` segment is the app's unknown-path 404, before routing.

falcon's router drops every leading slash (``//admin/settings`` finds the ``/admin/settings``
page) while the middleware deciding by path prefix (the admin door and input checks, the
no-store surfaces, the access log's redaction) reads ``req.path`` as sent. Refusing what no
link of the app ever spells keeps the router and every check deciding on the same path.
Percent-encoded spellings (``/%61dmin``, ``%2F``) need nothing here: the WSGI server decodes
``PATH_INFO`` before the app sees it, so they arrive as the plain path (or as ``//``).
"""

from __future__ import annotations

import falcon

#: Segments that name no page: a path holding one was not built by the app.
_NON_CANONICAL_SEGMENTS = frozenset({"", ".", ".."})


def is_canonical(path: str) -> bool:
    """Whether ``path`` (``PATH_INFO`` relative to the mount point) is ``/`` or ``/`` followed
    by segments none of which is empty, ``.`` or ``..`` (a single trailing slash allowed)."""
    if path in ("", "/"):
        return True
    if not path.startswith("/"):
        return False
    segments = path[1:].removesuffix("/").split("/")
    return not _NON_CANONICAL_SEGMENTS.intersection(segments)


class CanonicalPathMiddleware:
    """Falcon middleware answering a non-canonical path (:func:`is_canonical`) with the
    unknown-path 404 before any route, sink or other middleware's resource check runs."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not is_canonical(req.path):
            raise falcon.HTTPNotFound()


__all__ = ["CanonicalPathMiddleware", "is_canonical"]
