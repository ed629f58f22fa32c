"""What every sub-service shares: settings, storage, plugins, the clock and the site secret."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from datetime import datetime

import pluggy

from ..plugins.sql_store.store import SqlStorage
from ..settings import Settings
from ..timeutil import utcnow

SITE_SECRET_SETTING = "site_secret"  # noqa: S105 - the name of a setting, not a secret


class ServiceContext:
    """Shared state of one service instance. Safe to use from several threads."""

    def __init__(
        self,
        settings: Settings,
        storage: SqlStorage,
        plugins: pluggy.PluginManager,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.settings = settings
        self.storage = storage
        self.plugins = plugins
        self.clock = clock
        self._secret: bytes | None = None
        self._secret_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ServiceContext(storage={self.storage!r})"

    @property
    def site_secret(self) -> bytes:
        """The site secret: from settings, else the one stored in the database (generated and
        stored on first use, so every worker and every restart agrees on it)."""
        if self._secret is None:
            with self._secret_lock:
                if self._secret is None:
                    self._secret = self._load_secret()
        return self._secret

    def _load_secret(self) -> bytes:
        configured = self.settings.site_secret
        if configured is not None:
            return configured.get_secret_value().encode()
        with self.storage.transaction() as uow:
            stored = uow.settings.put_if_absent(
                SITE_SECRET_SETTING, secrets.token_urlsafe(48), at=self.clock()
            )
        return str(stored).encode()

    def keyed_hash(self, purpose: str, value: str) -> str:
        """HMAC-SHA256 hex of ``value`` under the site secret, separated by ``purpose``."""
        message = f"{purpose}\x00{value}".encode()
        return hmac.new(self.site_secret, message, hashlib.sha256).hexdigest()


def sha256_hex(value: str) -> str:
    """SHA-256 hex digest of a UTF-8 string (how keys and credentials are stored)."""
    return hashlib.sha256(value.encode()).hexdigest()


def digests_equal(presented: str, stored_digest: str) -> bool:
    """Constant-time comparison of a presented secret against a stored SHA-256 digest."""
    return hmac.compare_digest(sha256_hex(presented), stored_digest)
