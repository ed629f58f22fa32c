"""The host's subscriber store, as a storage backend plugin named ``host``.

Subscribers live in the host's ``host_users`` table; everything else (API keys, the outbox,
issues, ...) stays in the built-in SQL store, in the same database. The built-in store builds
:class:`HostSubscribers` on each transaction's own connection, so a subscriber change and the
outbox event it causes still commit (or roll back) together. ``db upgrade`` runs the package's
migrations and then :func:`create_host_tables`; readiness checks the host's tables too.

Select it with ``storage_backend = "host"`` (``NEWSLETTER_STORAGE_BACKEND=host``) once this
module is registered as a plugin (``create_app(plugins=[host_store])`` or an entry point).
``tests/storage/test_host_store_conformance.py`` runs the subscriber repository's conformance suite
against it.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from newsletter_connector import hookimpl
from newsletter_connector.descriptors import SubscriberStore
from newsletter_connector.errors import NotMigrated

from .host_db import create_host_tables, host_tables_exist
from .host_subscribers import HostSubscribers


def check_host_tables(engine: Engine) -> None:
    """Readiness: the host's tables exist."""
    if not host_tables_exist(engine):
        raise NotMigrated(
            "the host's tables are missing; run `python -m examples.wsgi_mount.host_site migrate`"
        )


HOST_SUBSCRIBERS = SubscriberStore(
    name="host",
    description="subscribers in the host site's host_users table",
    factory=HostSubscribers,
    check_ready=check_host_tables,
    migrate=create_host_tables,
)


@hookimpl
def newsletter_storage_backends() -> list[SubscriberStore]:
    return [HOST_SUBSCRIBERS]
