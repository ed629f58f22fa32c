"""Testing aids: the ``newsletter_*`` fixtures of :mod:`.pytest_plugin` (auto-loaded by pytest)
and :class:`StorageConformance`, the suite every storage backend must pass."""

from .conformance import StorageConformance

__all__ = ["StorageConformance"]
