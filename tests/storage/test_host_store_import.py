"""An import through the example host's store, which offers no subscriber batches: the same
outcomes, one subscriber at a time, and a repeat changes nothing."""

from __future__ import annotations

import io
from typing import Any

from sqlalchemy import func, select

from examples.wsgi_mount import host_site, host_store
from examples.wsgi_mount.host_db import host_users
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.importing import ImportOptions, ImportSource, Provenance
from newsletter_connector.storage.subscriber_batches import SubscriberBatches
from tests.storage.test_host_store_conformance import empty_host_tables


def test_a_list_imports_into_the_host_store_one_subscriber_at_a_time(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    """The host's repository offers no batches: an import goes through ``get_by_email`` and
    ``add``."""
    settings = newsletter_settings.model_copy(update={"storage_backend": "host"})
    host_site.migrate(settings)
    service = NewsletterService.build(settings, plugins=[host_store])
    try:
        with service.storage.transaction(write=False) as uow:
            assert not isinstance(uow.subscribers, SubscriberBatches)
        data = b"email,first_name\nann@example.org,Ann\nbob@example.org,Bob\nann@example.org,A\n"
        options = ImportOptions(provenance=Provenance("fair", "2024-01-01T00:00:00Z"))
        importer = service.subscriber_import
        first = importer.run(importer.plan(ImportSource.from_bytes(data), options))
        again = importer.run(
            importer.plan(ImportSource("again", lambda: io.BytesIO(data)), options)
        )
        assert (first.counts["added"], first.counts["unchanged"]) == (2, 1)
        assert again.counts["unchanged"] == 3
        with newsletter_storage.engine.connect() as connection:
            assert connection.scalar(select(func.count()).select_from(host_users)) == 2
        assert service.subscribers.get("ann@example.org").first_name == "Ann"
    finally:
        service.close()
        empty_host_tables(settings.database_url)
