"""newsletter-connector: the mailing list, issues, contact messages and analytics of a news site.

Public face: :func:`create_app`, :class:`NewsletterService`, :class:`Settings`, :data:`hookimpl`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("newsletter-connector")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

from .hookspecs import hookimpl
from .service import NewsletterService
from .settings import Settings, SettingsError
from .web.app import create_app

__all__ = [
    "NewsletterService",
    "Settings",
    "SettingsError",
    "__version__",
    "create_app",
    "hookimpl",
]
