"""docs/operations.md: the SQLite backup recipe makes a complete, usable copy of a live
database (WAL included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.settings import Settings
from tests.support.docblocks import docblock


def test_sqlite_online_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(
        database_url="sqlite:///newsletter.db",
        base_url="https://example.org/newsletter",
        site_secret="backup-test-secret",
    )
    live = NewsletterService.build(settings)
    try:
        live.initialise()
        key = live.admin.create_api_key("crm").key
        live.subscribers.subscribe({"email": "kept@example.org"})
        # The site is still running (its connections open, recent commits maybe in the WAL).
        namespace: dict[str, Any] = {}
        exec(compile(docblock("ops-sqlite-backup"), "<docs:backup>", "exec"), namespace)
    finally:
        live.close()
    restored = NewsletterService.build(
        settings.model_copy(update={"database_url": "sqlite:///newsletter-backup.db"})
    )
    try:
        restored.check_ready(tolerate_outage=False)
        assert restored.admin.authenticate_api_key(key).label == "crm"
        assert restored.subscribers.get("kept@example.org").status == "pending"
        with restored.storage.transaction(write=False) as uow:
            assert uow.outbox.status().unbatched == 1  # the signup event came along
    finally:
        restored.close()


def test_security_redact_path_snippet() -> None:
    exec(compile(docblock("security-redact-path"), "<docs:redact>", "exec"), {})
