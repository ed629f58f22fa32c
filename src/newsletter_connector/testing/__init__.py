"""Testing aids for the package and for plugin authors.

:mod:`.pytest_plugin` (auto-loaded by pytest) gives the ``newsletter_*`` database fixtures;
:class:`.conformance.StorageConformance` is the suite every storage backend must pass.
"""

from .conformance import StorageConformance

__all__ = ["StorageConformance"]
