"""Testing aids for the package and for plugin authors.

- :mod:`.pytest_plugin` (loaded automatically by pytest when the package is installed) gives
  database fixtures: ``newsletter_database_url``, ``newsletter_storage``, ``newsletter_settings``,
  ``newsletter_service``, ``newsletter_app`` and ``newsletter_client``. They use SQLite, or a fresh
  PostgreSQL database when ``NEWSLETTER_TEST_DATABASE_URL`` names a PostgreSQL server.
- :class:`.conformance.StorageConformance`: the suite every storage backend must pass. Subclass it
  in a test module and provide a ``storage`` fixture returning your backend, freshly emptied.
"""

from .conformance import StorageConformance

__all__ = ["StorageConformance"]
