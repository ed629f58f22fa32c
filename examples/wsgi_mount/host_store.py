"""The host's subscriber store, as a storage backend plugin named ``host``.

Subscribers live in the host's ``host_users`` table; everything else (API keys, the outbox,
issues, ...) stays in the built-in SQL store, in the same database. The backend is the built-in
:class:`SqlStorage` with one repository swapped: its unit of work returns
:class:`HostSubscribers` built on the transaction's own connection, so a subscriber change and
the outbox event it causes still commit (or roll back) together.

Select it with ``storage_backend = "host"`` (``NEWSLETTER_STORAGE_BACKEND=host``) once this
module is registered as a plugin (``create_app(plugins=[host_store])`` or an entry point).
``tests/test_host_store_conformance.py`` runs the storage conformance suite against it.
"""

from __future__ import annotations

from functools import cached_property

from newsletter_connector import hookimpl
from newsletter_connector.descriptors import StorageBackend
from newsletter_connector.errors import NotMigrated
from newsletter_connector.plugins.sql_store import SqlStorage
from newsletter_connector.plugins.sql_store.store import SqlUnitOfWork

from .host_db import create_host_tables, host_tables_exist
from .host_subscribers import HostSubscribers


class HostUnitOfWork(SqlUnitOfWork):
    """The built-in unit of work with the host's subscriber repository swapped in."""

    @cached_property
    def subscribers(self) -> HostSubscribers:  # type: ignore[override]
        return HostSubscribers(self.connection)


class HostStorage(SqlStorage):
    """The built-in SQL store, subscribers in ``host_users``."""

    unit_of_work_class = HostUnitOfWork

    def check_ready(self) -> None:
        super().check_ready()
        if not host_tables_exist(self.engine):
            raise NotMigrated(
                "the host's tables are missing; "
                "run `python -m examples.wsgi_mount.host_site migrate`"
            )

    def migrate(self) -> None:
        """``db upgrade``: the package's migrations, then the host's own tables."""
        super().migrate()
        create_host_tables(self.engine)


@hookimpl
def newsletter_storage_backends() -> list[StorageBackend]:
    return [
        StorageBackend(
            name="host",
            description="subscribers in the host site's host_users table; the rest in SQL",
            factory=HostStorage.from_settings,
        )
    ]
