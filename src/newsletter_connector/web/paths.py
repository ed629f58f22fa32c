"""Where each surface lives, relative to the app's mount point (``base_url``)."""

from __future__ import annotations

NEWSLETTER_API = "/api/newsletter/v1"
LISTSOURCE = "/api/listsource"
EXPORT = "/api/export"
ANALYTICS = "/analytics"


def surface_of(path: str) -> str:
    """``newsletter``, ``listsource``, ``export``, ``analytics`` (the capture endpoint, which
    speaks JSON) or ``pages`` for a request path."""
    for prefix, name in (
        (ANALYTICS, "analytics"),
        (NEWSLETTER_API, "newsletter"),
        (LISTSOURCE, "listsource"),
        (EXPORT, "export"),
    ):
        if path == prefix or path.startswith(prefix + "/"):
            return name
    return "pages"
