"""The records of the access repositories: API keys, admin users, sessions and acts, and
the platform connection (the credentials each holds stay out of its ``repr``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from ..https_rule import without_credentials

__all__ = [
    "AdminAuditRecord",
    "AdminSessionRecord",
    "AdminUserRecord",
    "ApiKeyRecord",
    "ConnectionRecord",
]


@dataclass(frozen=True)
class ApiKeyRecord:
    """A Newsletter API key as stored: never the key itself, only its SHA-256 digest."""

    id: int
    label: str
    key_prefix: str
    created_at: datetime
    revoked_at: datetime | None
    #: The last UTC day a request authenticated with the key (``None``: not since recorded).
    last_used_on: date | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class AdminUserRecord:
    """A user of the built-in admin login. ``password_hash`` is an argon2id hash (never the
    password) and stays out of ``repr``; ``role`` is ``owner`` or ``editor``
    (:data:`~newsletter_connector.descriptors.ADMIN_ROLES`)."""

    id: int
    username: str
    password_hash: str = field(repr=False)
    created_at: datetime
    role: str


@dataclass(frozen=True)
class MessageHandlingRecord:
    """An admin's mark that a contact message was handled: by whom (the admin's name) and
    when. Kept apart from the message, which never changes."""

    message_id: int
    handled_by: str
    handled_at: datetime


@dataclass(frozen=True)
class AdminSessionRecord:
    """A signed-in admin session. ``token_digest`` is the SHA-256 hex of the cookie's token
    (the token itself is never stored); ``csrf_token`` guards its forms. Both stay out of
    ``repr``."""

    token_digest: str = field(repr=False)
    username: str
    csrf_token: str = field(repr=False)
    created_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True)
class AdminAuditRecord:
    """One admin act: who (``actor``), what (``action``, e.g. ``api_key.create``), on what
    (``target``, e.g. a key's label; never a secret), from where (``client_hash``, a keyed
    hash of the client address, never the address) and what else it recorded (``detail``,
    e.g. where a reader agreed to text messages)."""

    id: int
    at: datetime
    actor: str
    action: str
    target: str | None
    client_hash: str | None
    detail: str | None = None


@dataclass(frozen=True)
class ConnectionRecord:
    """The operator-configured connection to the mailing platform. ``repr`` leaves out the
    token and any credentials in ``platform_base``, so logging a connection never leaks them."""

    id: int
    platform_base: str
    transport: str
    token: str
    created_at: datetime
    disabled_at: datetime | None

    def __repr__(self) -> str:
        return (
            f"ConnectionRecord(id={self.id}, "
            f"platform_base={without_credentials(self.platform_base)!r}, "
            f"transport={self.transport!r}, token=<hidden>, disabled_at={self.disabled_at!r})"
        )
